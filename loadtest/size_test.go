package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/internal/fntest"
	"github.com/lmigo/lmigo/loadtest/sizing"
)

// TestSizeEndToEnd sizes the I/O-bound shape under the fake Runtime API,
// on a tiny profile (N up to 4, short steps): the JSON has the
// platform's three names at the top level, consistent with each other.
func TestSizeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	bin, events := fntest.Shape(t)
	dir := t.TempDir()
	jsonOut := filepath.Join(dir, "size.json")
	var stdout, stderr bytes.Buffer
	t0 := time.Now()
	err := sizeCommand(t.Context(), []string{"-bootstrap", bin, "-events", events, "-target", "fake", "-vcpus", "2",
		"-max-n", "4", "-step", "400ms", "-json", jsonOut, "-out", dir}, &stdout, &stderr)
	t.Logf("took %s\n%s\n%s", time.Since(t0), stderr.String(), stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	n, _ := top["PerExecutionEnvironmentMaxConcurrency"].(float64)
	per, _ := top["ConcurrencyPerVCpu"].(float64)
	ratio, _ := top["ExecutionEnvironmentMemoryGiBPerVCpu"].(float64)
	if n < 1 || per != n/2 || ratio != 2 {
		t.Errorf("N %v, per vCPU %v, GiB per vCPU %v: want N >= 1, N/2 per vCPU, 2 GiB (the shape holds little memory)", n, per, ratio)
	}
	var p struct {
		Steps     []sizing.Step `json:"steps"`
		WallMS    float64       `json:"wallMsPerInvocation"`
		CPUMS     float64       `json:"cpuMsPerInvocation"`
		WaitShare float64       `json:"waitingShare"`
		KneeBound string        `json:"kneeBound"`
		Check     *sizing.Check `json:"check"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	var ns []int
	for _, s := range p.Steps {
		ns = append(ns, s.N)
	}
	if len(ns) < 3 || ns[0] != 1 || ns[1] != 2 || ns[2] != 4 {
		t.Errorf("steps at N = %v, want 1, 2, 4 (and any remeasured)", ns)
	}
	// The shape waits 38 ms of about 40: most of the wall time is waiting.
	if p.WallMS < 38 || p.WaitShare < 0.5 || p.CPUMS <= 0 {
		t.Errorf("wall %.1f ms, CPU %.2f ms, waiting %.2f: want the shape's 40 ms, mostly waiting", p.WallMS, p.CPUMS, p.WaitShare)
	}
	if p.KneeBound == "" || p.Check == nil {
		t.Errorf("knee bound %q (want -max-n), check %+v (want one)", p.KneeBound, p.Check)
	}
	md, err := os.ReadFile(filepath.Join(dir, "size.md"))
	if err != nil || !bytes.Contains(md, []byte("--parameter-overrides MaxConcurrency=")) {
		t.Errorf("size.md (%v) lacks the SAM parameters:\n%s", err, md)
	}
}

// TestSizeInterrupted: Ctrl-C (the context ending) mid-sweep stops the
// function's process and returns.
func TestSizeInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	bin, events := fntest.Shape(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := &notifyWriter{match: "size: N=1 ", seen: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- sizeCommand(ctx, []string{"-bootstrap", bin, "-events", events, "-target", "fake", "-step", "2s", "-json", "", "-out", ""}, &bytes.Buffer{}, w)
	}()
	select {
	case <-w.seen:
	case err := <-done:
		t.Fatalf("ended before its first step: %v", err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("interrupted, returned no error")
	}
	if pids := fntest.Running(bin); len(pids) > 0 {
		t.Errorf("processes of %s still running: %v", bin, pids)
	}
}

// notifyWriter closes seen once what it is written contains match.
type notifyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	match string
	seen  chan struct{}
	once  sync.Once
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.match) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestSizeFunctionExits: a function that exits on one of its events
// ends size at once with the exit, its status and its last words.
func TestSizeFunctionExits(t *testing.T) {
	bin, data := fixture(t, "storeapi")
	var out bytes.Buffer
	err := sizeCommand(t.Context(), []string{"-bootstrap", bin, "-events", filepath.Join(data, "event-fatal.json"), "-target", "fake",
		"-step", "300ms", "-out", ""}, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "at N=1: the function exited (exit status 1)") || !strings.Contains(err.Error(), "get item bulk#legacy") {
		t.Errorf("err %v, want the exit at N=1 with its last words\n%s", err, out.String())
	}
}
