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
		Steps     []sizeStep `json:"steps"`
		WallMS    float64    `json:"wallMsPerInvocation"`
		CPUMS     float64    `json:"cpuMsPerInvocation"`
		WaitShare float64    `json:"waitingShare"`
		KneeBound string     `json:"kneeBound"`
		Check     *sizeCheck `json:"check"`
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

// TestSizeSummarize: from the steps of a sweep to the recommendation, the
// arithmetic of size without a process: the knee scaled to the function
// alone, never past Little's law for it; for a CPU-bound function the
// loss at the scaling load asks for more slots than CPUs, up to the
// latency bound.
func TestSizeSummarize(t *testing.T) {
	step := func(n int, x, p50, cpu, drv, others float64, lin bool) sizeStep {
		return sizeStep{N: n, Invocations: int64(x * 3), Throughput: x, MeanMS: p50, P50MS: p50, P99MS: 2 * p50, CPUMS: cpu, DriverCPUMS: drv,
			OtherCPUs: others, BaseRSSMiB: 10, PeakRSSMiB: 10 + 0.1*float64(n), Linear: lin}
	}
	tests := []struct {
		name        string
		steps       []sizeStep
		n           int
		perVCPU     float64
		ratio       int
		functionMax float64 // the knee for the function alone, at most
	}{
		{"cpu-bound", []sizeStep{step(1, 40, 25, 21, 1.3, 0, true), step(2, 76, 25.6, 21, 1.3, 0, true), step(4, 80, 49, 21, 1.3, 0, false), step(3, 75, 37, 21, 1.3, 0, false)},
			4, 2, 2, 2.4},
		{"io-bound", []sizeStep{step(1, 24, 41.6, 2.4, 0.8, 0, true), step(16, 380, 42, 2.4, 0.8, 0, true), step(32, 500, 64, 2.4, 0.8, 0, false), step(24, 560, 43, 2.4, 0.8, 0, true), step(28, 560, 50, 2.4, 0.8, 0, false)},
			32, 16, 2, 32},
		// The load test's CPU as large as the function's would scale the
		// knee to 48: Little's law for the function alone caps it at 34.7.
		{"io-bound, capped", []sizeStep{step(1, 24, 41.6, 2.4, 2.4, 0, true), step(16, 380, 42, 2.4, 2.4, 0, true), step(32, 500, 64, 2.4, 2.4, 0, false), step(24, 560, 43, 2.4, 2.4, 0, true), step(28, 560, 50, 2.4, 2.4, 0, false)},
			35, 17.5, 2, 34.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &sizeProfile{VCPUs: 2, MachineCPUs: 2, Steps: tt.steps}
			checked := 0
			err := p.summarize(func(n int, rate float64) (*sizeCheck, error) { checked = n; return nil, nil })
			if err != nil {
				t.Fatal(err)
			}
			if p.PerExecutionEnvironmentMaxConcurrency != tt.n || p.ConcurrencyPerVCpu != tt.perVCPU || p.ExecutionEnvironmentMemoryGiBPerVCpu != tt.ratio {
				t.Errorf("N=%d, %v per vCPU, %d GiB per vCPU; want N=%d, %v, %d (knee %d, function alone %.1f, Little %.1f)",
					p.PerExecutionEnvironmentMaxConcurrency, p.ConcurrencyPerVCpu, p.ExecutionEnvironmentMemoryGiBPerVCpu, tt.n, tt.perVCPU, tt.ratio, p.KneeN, p.FunctionKnee, p.LittleKnee)
			}
			if p.FunctionKnee > tt.functionMax || p.FunctionKnee > p.LittleKnee+1e-9 {
				t.Errorf("function alone N=%.1f, past Little's law's %.1f", p.FunctionKnee, p.LittleKnee)
			}
			if checked != tt.n {
				t.Errorf("checked at N=%d, want the recommended %d", checked, tt.n)
			}
		})
	}
}

// TestSizeNoCPU: steps in which the function's processes used no CPU
// the kernel counted (a wrapper measured alone did that) give no
// recommendation but one sentence that says why, and whatever the steps,
// the profile's JSON holds no +Inf or NaN.
func TestSizeNoCPU(t *testing.T) {
	step := func(n int, cpu float64) sizeStep {
		return sizeStep{N: n, Invocations: 100, Throughput: 24 * float64(n), P50MS: 41, P99MS: 43, CPUMS: cpu, BaseRSSMiB: 1.7, PeakRSSMiB: 1.7, Linear: true}
	}
	p := &sizeProfile{VCPUs: 2, MachineCPUs: 2, Steps: []sizeStep{step(1, 0), step(2, 0)}}
	err := p.summarize(func(int, float64) (*sizeCheck, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "no CPU time") || strings.Count(strings.TrimSpace(err.Error()), ". ") > 0 {
		t.Errorf("err %v, want one sentence saying the function used no CPU time", err)
	}
	if p.PerExecutionEnvironmentMaxConcurrency != 0 {
		t.Errorf("recommended N=%d from steps without CPU", p.PerExecutionEnvironmentMaxConcurrency)
	}
	if _, err := json.Marshal(p); err != nil {
		t.Errorf("JSON of the profile: %v", err)
	}
	var out bytes.Buffer
	printSize(&out, p)
	if strings.Contains(out.String(), "SAM parameters") || strings.Contains(out.String(), "PerExecutionEnvironmentMaxConcurrency 0") {
		t.Errorf("printed a recommendation without one:\n%s", out.String())
	}
	if md := sizeMarkdown(p); bytes.Contains(md, []byte("sam deploy")) {
		t.Errorf("size.md gives SAM parameters without a recommendation:\n%s", md)
	}
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
