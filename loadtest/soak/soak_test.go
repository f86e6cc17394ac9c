package soak

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestSoakShort is the CI version of make soak, 20 s of load at N=64: the
// reference bootstrap under the mixed load with failures for 10 s (every
// invocation answered exactly once, memory flat, a clean exit on
// SIGTERM), then every handler form at once for 10 s under injected faults
// and SIGTERM under load (each invocation handed out answered once, with
// its own token, echoing its invocation ID).
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: -short")
	}
	// It builds its bootstraps first: a cold build cache on a loaded
	// machine is slow, not broken, so only the test's deadline bounds it.
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Until(d)/20))
		defer cancel()
	}
	var log bytes.Buffer
	rep, err := Run(ctx, Config{N: 64, Duration: 20 * time.Second, Sample: time.Second, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var out bytes.Buffer
	Print(&out, rep)
	t.Log("\n" + out.String())
	if !rep.OK() {
		t.Fatalf("soak found problems")
	}
}
