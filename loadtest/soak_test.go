package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestSoakShort is the CI version of make soak: the reference bootstrap at
// N=64 for 10 s under the mixed load with failures; every invocation
// answered exactly once, memory flat, a clean exit on SIGTERM.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, err := soak(ctx, soakConfig{N: 64, Duration: 10 * time.Second, Sample: time.Second, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var out bytes.Buffer
	printSoak(&out, rep)
	t.Log("\n" + out.String())
	if !rep.ok() {
		t.Fatalf("soak found problems")
	}
}
