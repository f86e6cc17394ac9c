package rie

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// StartT starts an emulator for a test and stops it in tb.Cleanup. It
// skips the test when the machine cannot run the emulator (ErrUnsupported:
// not root, or no unshare) and fails it for any other start error, so a
// CI job that runs as root never skips silently. On failure, and when Stop
// reports a problem, the emulator's output is logged. An emulator that
// exited by itself (ErrExited) is not reported by the cleanup: the test
// sees that through its invokes, Done or its own call to Stop. Unless
// opts.StartTimeout is set, the start may take until shortly before the
// test's deadline (go test -timeout), however slow the machine.
func StartT(tb testing.TB, opts Options) *Emulator {
	tb.Helper()
	ctx, cancel := testContext(tb)
	defer cancel()
	if d, ok := ctx.Deadline(); ok && opts.StartTimeout <= 0 {
		opts.StartTimeout = time.Until(d)
	}
	e, err := Start(ctx, opts)
	if errors.Is(err, ErrUnsupported) {
		tb.Skipf("rie: skipping, the emulator cannot run here: %v", err)
	}
	if err != nil {
		tb.Fatalf("rie: start: %v", err)
	}
	tb.Cleanup(func() {
		err := e.Stop()
		if err != nil && !errors.Is(err, ErrExited) {
			tb.Errorf("rie: stop: %v", err)
		}
		if tb.Failed() {
			tb.Logf("emulator output:\n%s", e.Logs())
		}
	})
	return e
}

// BuildT builds the main package pkg (relative to the test's package
// directory, e.g. "./testdata/echo") into tb.TempDir and returns the
// binary's path. It fails the test when the build fails. The build may
// take until shortly before the test's deadline: a cold build cache on a
// loaded machine is slow, not broken.
func BuildT(tb testing.TB, pkg string) string {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "bootstrap")
	ctx, cancel := testContext(tb)
	defer cancel()
	if err := Build(ctx, pkg, out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// testContext returns a context that ends with tb, and a twentieth of the
// time left before tb's deadline (go test -timeout) when it has one: a
// build or start that runs out of time then fails the test with its own
// message and output, rather than the test binary being killed.
func testContext(tb testing.TB) (context.Context, context.CancelFunc) {
	if dt, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			return context.WithDeadline(tb.Context(), d.Add(-time.Until(d)/20))
		}
	}
	return context.WithCancel(tb.Context())
}
