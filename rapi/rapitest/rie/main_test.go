package rie

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// buildDir holds the echo bootstrap, built once for the whole test binary.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rie-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { _ = os.RemoveAll(dir) }))
}

// echoBuild is the echo bootstrap's build, done once, by the first test
// that asks, within that test's deadline.
var echoBuild struct {
	once sync.Once
	path string
	err  error
}

// echoBootstrap returns the aws-lambda-go echo function (testdata/echo).
// It skips the test first when the emulator cannot run here, so that no
// build is wasted.
func echoBootstrap(tb testing.TB) string {
	tb.Helper()
	if err := Supported(); err != nil {
		tb.Skipf("rie: skipping, the emulator cannot run here: %v", err)
	}
	echoBuild.once.Do(func() {
		ctx, cancel := testContext(tb)
		defer cancel()
		echoBuild.path = filepath.Join(buildDir, "echo")
		echoBuild.err = Build(ctx, "./testdata/echo", echoBuild.path)
	})
	if echoBuild.err != nil {
		tb.Fatal(echoBuild.err)
	}
	return echoBuild.path
}
