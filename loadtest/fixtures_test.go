package main

import (
	"path/filepath"
	"testing"

	"github.com/lmigo/lmigo/loadtest/target"
)

// fixturesDir holds the functions of real shapes (internal/fixtures), each
// with its sample events in testdata.
const fixturesDir = "../internal/fixtures"

// fixture builds the bootstrap of the fixture named so and returns it with
// the fixture's testdata directory.
func fixture(t *testing.T, name string) (bin, testdata string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	bin = filepath.Join(t.TempDir(), name)
	pkg := "github.com/lmigo/lmigo/internal/fixtures/" + name + "/bootstrap"
	if err := target.Build(t.Context(), target.HostArch(), []string{pkg}, []string{bin}); err != nil {
		t.Fatal(err)
	}
	return bin, filepath.Join(fixturesDir, name, "testdata")
}
