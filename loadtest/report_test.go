package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// runReport is a report of kind run as execute makes it: one runtime, one
// scenario, one run, against the fake API.
func runReport(t *testing.T, model string) *report {
	t.Helper()
	cfg := defaultConfig()
	cfg.Model, cfg.Rate, cfg.OnThrottle = model, 1000, bench.ThrottleRetry
	sc, err := bench.NewScenario(cfg.Settings, bench.Row{Workload: "mix-panic", N: 8, Count: 2000})
	if err != nil {
		t.Fatal(err)
	}
	api := &rapitest.Stats{Invocations: 2100, Responses: 1630, Errors: 470, MaxOutstanding: 8, Throttles: 5}
	run := bench.RunResult{Scenario: sc.Name, Runtime: target.Lmigo, Rep: 1, API: api,
		Load: bench.LoadCounts{OK: 1630, FuncErrors: 470, Throttles: 5}}
	med := map[string]float64{bench.Throughput: 1000, bench.P50: 800, bench.P90: 5600, bench.P99: 7000, bench.P999: 9000, bench.MaxLatency: 9500,
		bench.CPUPerInv: 190, bench.PeakRSS: 10.4, bench.RSSAfter: 10.3, bench.Invocations: 2000, bench.RejectedPct: 0.15, bench.ThrottlesPer1k: 1.5}
	return &report{Kind: "run", Config: cfg, Runtimes: []target.Runtime{{Name: target.Lmigo}},
		Scenarios: []scenarioReport{{Scenario: sc, Runs: []bench.RunResult{run}, Medians: map[string]map[string]float64{target.Lmigo: med}}}}
}

// TestRunReportLeads checks that the run report leads with the rates
// offered and answered, latency, CPU, memory and the exactly-once line,
// details after.
func TestRunReportLeads(t *testing.T) {
	var b bytes.Buffer
	printRun(&b, runReport(t, load.ModelOpen))
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"lmigo: mix-panic at N=8, open loop at 1000/s", "  offered rate ", "  answered rate ", "  latency p50 ",
		"  runtime CPU per invocation ", "    read as ", "  runtime peak RSS / RSS after ", "  exactly once ", "details:",
		"  throttled attempts, retried "}
	if len(lines) < len(want) {
		t.Fatalf("%d lines, want at least %d", len(lines), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	for _, s := range []string{
		"yes: 2100 handed out = 2100 answered once, 0 lost, 0 duplicated, 0 cross-wired, 0 without echo, max polls + in flight 8 ≤ N=8",
		"3 (0.1% of attempts), 2 in the warm-up: a burst, not overload: rate × p50 latency ≈ 0.8 invocations in flight for N=8 slots, the runtime using 19% of a CPU",
		"190µs (19% of a CPU at 1000/s)",
		"every invocation answered exactly once",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q", s)
		}
	}

	md := string(markdown(runReport(t, load.ModelOpen)))
	glance, details := runLines(runReport(t, load.ModelOpen))
	for _, l := range append(glance, details...) {
		if row := "| " + strings.Join(l, " | ") + " |"; !strings.Contains(md, row) {
			t.Errorf("Markdown lacks the terminal's line %q", row)
		}
	}
}

// TestThrottleMeaning: throttles are read as overload only when the load
// offered fills the slots; a cold start's burst while the runtime idles
// is said to be one (issue 32: 3 throttles at 19% of a CPU).
func TestThrottleMeaning(t *testing.T) {
	open := bench.Scenario{Model: load.ModelOpen, Rate: 1000, N: 8}
	idle := map[string]float64{bench.P50: 800, bench.CPUPerInv: 190, bench.Throughput: 1000} // 0.8 in flight of 8
	full := map[string]float64{bench.P50: 7000, bench.CPUPerInv: 900, bench.Throughput: 1000}
	tests := []struct {
		name          string
		sc            bench.Scenario
		measured, wrm int64
		m             map[string]float64
		want          string
	}{
		{"none", open, 0, 0, idle, "every invoke found a slot polling"},
		{"cold start", open, 0, 3, idle, "all in the warm-up: the first invocations of a cold start"},
		{"burst", open, 1, 2, idle, "a burst, not overload: rate × p50 latency ≈ 0.8 invocations in flight for N=8 slots, the runtime using 19% of a CPU"},
		{"overload", open, 50, 0, full, "overload: rate × p50 latency ≈ 7.0 invocations in flight for N=8 slots, the runtime using 90% of a CPU; at 1000/s the runtime fell behind"},
		{"closed", bench.Scenario{Model: load.ModelClosed, N: 8, Callers: 8}, 5, 0, idle, "closed loop: each caller re-sends"},
		{"waves", bench.Scenario{Model: load.ModelWaves, N: 8}, 5, 0, idle, "that race, not overload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := throttleMeaning(tt.sc, tt.measured, tt.wrm, tt.m); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestClosedLoopThrottlesExplained checks that the closed loop's throttles
// are said not to be overload.
func TestClosedLoopThrottlesExplained(t *testing.T) {
	var b bytes.Buffer
	printRun(&b, runReport(t, load.ModelClosed))
	if !strings.Contains(b.String(), "closed loop: each caller re-sends the instant it is answered") {
		t.Errorf("closed-loop throttles not explained:\n%s", b.String())
	}
}

func TestExactlyOnce(t *testing.T) {
	ok := rapitest.Stats{Invocations: 10, Responses: 7, Errors: 3, MaxOutstanding: 4}
	for _, c := range []struct {
		name    string
		edit    func(*rapitest.Stats, *bench.RunResult)
		holds   bool
		contain string
	}{
		{"ok", func(*rapitest.Stats, *bench.RunResult) {}, true, "yes: 10 handed out = 10 answered once"},
		{"lost", func(s *rapitest.Stats, _ *bench.RunResult) { s.Responses, s.Timeouts = 6, 1 }, false, "NO: 10 handed out ≠ 9 answered once, 1 lost"},
		{"duplicated", func(s *rapitest.Stats, _ *bench.RunResult) { s.Duplicates = 1 }, false, "1 duplicated"},
		{"cross-wired", func(s *rapitest.Stats, _ *bench.RunResult) { s.CrossWired = 2 }, false, "2 cross-wired"},
		{"no echo", func(s *rapitest.Stats, _ *bench.RunResult) { s.NoEcho = 1 }, false, "1 without echo"},
		{"no echo expected", func(s *rapitest.Stats, r *bench.RunResult) { s.NoEcho, r.Runtime = 10, target.AWSLambdaGo }, true, "echo not expected"},
		{"over N", func(s *rapitest.Stats, _ *bench.RunResult) { s.MaxOutstanding, s.Violations = 5, 1 }, false, "max polls + in flight 5 > N=4 (1 violations)"},
		{"driver", func(_ *rapitest.Stats, r *bench.RunResult) { r.Load.OK = 6 }, false, "the callers counted 9 answers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := ok
			r := bench.RunResult{Runtime: target.Lmigo, Load: bench.LoadCounts{OK: 7, FuncErrors: 3}}
			c.edit(&st, &r)
			r.API = &st
			oc, _ := exactlyOnce(r, 4)
			if oc.holds() != c.holds || !strings.Contains(oc.String(), c.contain) {
				t.Errorf("holds %v, %q; want %v, containing %q", oc.holds(), oc, c.holds, c.contain)
			}
		})
	}
	if _, checked := exactlyOnce(bench.RunResult{}, 4); checked {
		t.Error("checked without the fake API")
	}
}
