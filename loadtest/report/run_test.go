package report

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// runReport is a report of kind run as execute makes it: one runtime, one
// scenario, one run, against the fake API.
func runReport(t *testing.T, model string) *Report {
	t.Helper()
	s := bench.DefaultSettings()
	s.Model, s.Rate, s.OnThrottle = model, 1000, bench.ThrottleRetry
	sc, err := bench.NewScenario(s, bench.Row{Workload: "mix-panic", N: 8, Count: 2000})
	if err != nil {
		t.Fatal(err)
	}
	api := &rapitest.Stats{Invocations: 2100, Responses: 1630, Errors: 470, MaxOutstanding: 8, Throttles: 5}
	run := bench.RunResult{Scenario: sc.Name, Runtime: target.Lmigo, Rep: 1, API: api,
		Load: bench.LoadCounts{OK: 1630, FuncErrors: 470, Throttles: 5}}
	med := map[string]float64{bench.Throughput: 1000, bench.P50: 800, bench.P90: 5600, bench.P99: 7000, bench.P999: 9000, bench.MaxLatency: 9500,
		bench.CPUPerInv: 190, bench.PeakRSS: 10.4, bench.RSSAfter: 10.3, bench.Invocations: 2000, bench.RejectedPct: 0.15, bench.ThrottlesPer1k: 1.5}
	return &Report{Kind: "run", Config: s, Settings: s, Runtimes: []target.Runtime{{Name: target.Lmigo}},
		Scenarios: []ScenarioReport{{Scenario: sc, Runs: []bench.RunResult{run}, Medians: map[string]map[string]float64{target.Lmigo: med}}}}
}

// TestRunReportLeads checks that the run report leads with the rates
// offered and answered, latency, CPU, memory and the exactly-once line,
// details after.
func TestRunReportLeads(t *testing.T) {
	var b bytes.Buffer
	PrintRun(&b, runReport(t, load.ModelOpen))
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
		"3 in the measured window (0.1% of its attempts), 2 more in the warm-up (5 in all): a burst, not overload: rate × p50 latency ≈ 0.8 invocations in flight for N=8 slots, the runtime using 19% of a CPU",
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
	ready := map[string]float64{bench.P50: 800, bench.CPUPerInv: 190, bench.Throughput: 1000, bench.Ready: 41.2}
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
		// The load began once exec to N polls had taken 41.2 ms: the
		// slots had all polled, so start-up is not the cause.
		{"cold start, slots ready", open, 0, 67, ready, "all in the warm-up, and the load began only once every slot had polled (exec to N polls outstanding: 41.2ms), so not the slots' start-up: the first invocations of a cold start ran longer than later ones"},
		{"burst", open, 1, 2, idle, "a burst, not overload: rate × p50 latency ≈ 0.8 invocations in flight for N=8 slots, the runtime using 19% of a CPU"},
		{"overload", open, 50, 0, full, "overload: rate × p50 latency ≈ 7.0 invocations in flight for N=8 slots, the runtime using 90% of a CPU; at 1000/s the runtime fell behind"},
		{"closed", bench.Scenario{Model: load.ModelClosed, N: 8, Callers: 8}, 5, 0, idle, "closed loop: each caller re-sends"},
		{"waves", bench.Scenario{Model: load.ModelWaves, N: 8}, 5, 0, idle, "that race, not overload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := throttleMeaning(tt.sc, tt.measured, tt.wrm, tt.m, target.Fake)
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
			if _, ok := tt.m[bench.Ready]; ok && strings.Contains(got, "before every slot had polled") {
				t.Errorf("start-up blamed with every slot polling before the load: %q", got)
			}
		})
	}
}

// TestClosedLoopThrottlesExplained checks that the closed loop's throttles
// are said not to be overload.
func TestClosedLoopThrottlesExplained(t *testing.T) {
	var b bytes.Buffer
	PrintRun(&b, runReport(t, load.ModelClosed))
	if !strings.Contains(b.String(), "closed loop: each caller re-sends the instant it is answered") {
		t.Errorf("closed-loop throttles not explained:\n%s", b.String())
	}
}

// TestRunReportRates: the report says what was offered and what was
// answered, apart, and says why its CPU per invocation is not the
// README's figure.
func TestRunReportRates(t *testing.T) {
	tests := []struct {
		model string
		want  []string
		not   []string
	}{
		{load.ModelOpen, []string{
			"  offered rate ", "1000 invocations/s, open loop",
			"  answered rate ", "1000 invocations/s in the measured window",
			"below saturation", "mix-panic (answers up to 64 KiB", "the README's CPU figure is tiny invocations at N=64, the runtime saturated",
		}, []string{"throughput", "the rate offered"}},
		{load.ModelClosed, []string{
			"  offered load ", "8 callers, each sending its next invocation the moment it has an answer",
			"  answered rate ", "mix-panic",
		}, []string{"throughput", "below saturation"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		PrintRun(&b, runReport(t, tt.model))
		out := b.String()
		for _, s := range tt.want {
			if !strings.Contains(out, s) {
				t.Errorf("%s: report lacks %q:\n%s", tt.model, s, out)
			}
		}
		for _, s := range tt.not {
			if strings.Contains(out, s) {
				t.Errorf("%s: report says %q:\n%s", tt.model, s, out)
			}
		}
	}
}

// TestRunNotesMatchReport: the notes of a run speak only of what its
// report shows: no ratios, no floor, no table columns it does not print.
func TestRunNotesMatchReport(t *testing.T) {
	rep := runReport(t, load.ModelOpen)
	rep.Notes = RunNotes(rep)
	md := string(markdown(rep))
	for _, s := range []string{`(?i)\bratios?\b`, `\bfloor\b`, `thr/1k`, `rej %`, `drv CPU`, `\| scenario \| runtime \| inv/s`} {
		if regexp.MustCompile(s).MatchString(md) {
			t.Errorf("run.md speaks of %q, which the run report does not show:\n%s", s, md)
		}
	}
	for _, s := range []string{"CPU per invocation", "from the intended send time", "Peak RSS"} {
		if !strings.Contains(md, s) {
			t.Errorf("run.md does not explain %q:\n%s", s, md)
		}
	}
}

// TestWrittenPaths: the report lists the files it wrote where they are,
// whatever the directory the load test runs in.
func TestWrittenPaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	rep := runReport(t, load.ModelOpen)
	var out bytes.Buffer
	if err := Write(rep, "out", "run", &out); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "out", "run.json")
	if !strings.Contains(out.String(), "written: "+want+" ") {
		t.Errorf("printed %q, want the files by their path, %s first", out.String(), want)
	}
}

// TestRSSCaption: the run's notes say what its RSS plot shows, and why
// it rises in a run too short for a garbage collection.
func TestRSSCaption(t *testing.T) {
	tests := []struct {
		m    map[string]float64
		want string
	}{
		{map[string]float64{bench.GCs: 0}, "No garbage collection ran in the measured window"},
		{map[string]float64{bench.GCs: 3}, "falls back at garbage collections"},
		{map[string]float64{}, "falls back at garbage collections"},
	}
	for _, tt := range tests {
		got := rssCaption(tt.m)
		if !strings.Contains(got, "VmRSS) every 100 ms from exec") || !strings.Contains(got, tt.want) {
			t.Errorf("rssCaption(%v) = %q, want it to say what the plot shows and %q", tt.m, got, tt.want)
		}
	}
}

// TestRunVerdict: a run ends with one line saying what it proves and what
// it does not, and a run with problems proves nothing.
func TestRunVerdict(t *testing.T) {
	good := runReport(t, load.ModelOpen)
	bad := runReport(t, load.ModelOpen)
	bad.Scenarios[0].Runs[0].Problems = []string{"1 wrong answer"}
	tests := []struct {
		name string
		rep  *Report
		want []string
	}{
		{"good", good, []string{"verdict: lmigo at N=8, mix-panic (1000/s offered), p99 7.00ms: every one of 2100 invocations answered right and exactly once",
			"5 throttles", "target fake; it does not show how it behaves on Lambda, at saturation (make loadtest) or over hours (make soak)."}},
		{"problems", bad, []string{"verdict: NOT shown"}},
	}
	for _, tt := range tests {
		v := RunVerdict(tt.rep)
		if strings.Contains(v, "\n") {
			t.Errorf("%s: verdict of more than one line: %q", tt.name, v)
		}
		for _, w := range tt.want {
			if !strings.Contains(v, w) {
				t.Errorf("%s: verdict %q lacks %q", tt.name, v, w)
			}
		}
	}
}
