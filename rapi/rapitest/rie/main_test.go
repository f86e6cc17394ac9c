package rie

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

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

var echoOnce = sync.OnceValues(func() (string, error) {
	out := filepath.Join(buildDir, "echo")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return out, Build(ctx, "./testdata/echo", out)
})

// echoBootstrap returns the aws-lambda-go echo function (testdata/echo).
// It skips the test first when the emulator cannot run here, so that no
// build is wasted.
func echoBootstrap(tb testing.TB) string {
	tb.Helper()
	if err := Supported(); err != nil {
		tb.Skipf("rie: skipping, the emulator cannot run here: %v", err)
	}
	p, err := echoOnce()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
