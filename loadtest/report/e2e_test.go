package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
)

// TestCompareEndToEnd builds the three bootstraps and runs a small comparison
// against the fake Runtime API: tiny at N=1 (pinned) and N=4, and a grow
// run at N=2, two repetitions, then checks the accounting and the files.
func TestCompareEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three bootstraps")
	}
	rts := e2eRuntimes(t, target.Lmigo, target.LmigoRaw, target.AWSLambdaGo)
	s, out := e2eSettings(t)
	s.Count, s.Duration = 150, 5*time.Second
	rep := e2eRun(t, s, out, []bench.Row{{Workload: "tiny", N: 1}, {Workload: "tiny", N: 4}, {Workload: "grow", N: 2}}, rts)
	if scs := rep.Scenarios; scs[0].Scenario.PinCPU != 0 || scs[1].Scenario.PinCPU != -1 {
		t.Fatalf("pinning: N=1 %d, N=4 %d", scs[0].Scenario.PinCPU, scs[1].Scenario.PinCPU)
	}

	for _, sr := range rep.Scenarios {
		sc := sr.Scenario
		if len(sr.Runs) != len(rts)*s.Reps {
			t.Fatalf("%s: %d runs, want %d", sc.Name, len(sr.Runs), len(rts)*s.Reps)
		}
		for i, r := range sr.Runs {
			if want, rep := rts[i%len(rts)].Name, i/len(rts)+1; r.Runtime != want || r.Rep != rep {
				t.Errorf("%s: run %d is %s rep %d, want %s rep %d (interleaved)", sc.Name, i, r.Runtime, r.Rep, want, rep)
			}
			if len(r.Problems) > 0 {
				t.Errorf("%s %s rep %d: %s", sc.Name, r.Runtime, r.Rep, strings.Join(r.Problems, "; "))
				continue
			}
			checkRun(t, sc, r)
		}
		for _, rt := range rts {
			if len(sr.Medians[rt.Name]) == 0 {
				t.Errorf("%s: no medians for %s", sc.Name, rt.Name)
			}
		}
		if r, ok := sr.Ratios[bench.P50]; !ok || r <= 0 {
			t.Errorf("%s: p50 ratio %v, %v", sc.Name, r, ok)
		}
		if r, ok := sr.MoreRatios[target.LmigoRaw][bench.P50]; !ok || r <= 0 {
			t.Errorf("%s: lmigo-raw p50 ratio %v, %v", sc.Name, r, ok)
		}
		if sc.Work.Waved() {
			// The verdicts depend on the machine; that they are there does not.
			if len(sr.Targets) != 2 {
				t.Errorf("%s: targets %+v, want one each for lmigo and lmigo-raw", sc.Name, sr.Targets)
			}
			for _, rt := range rts {
				if _, ok := sr.Medians[rt.Name][bench.RSSBefore]; !ok {
					t.Errorf("%s %s: no RSS before", sc.Name, rt.Name)
				}
			}
		}
	}

	b, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Kind      string
		Scenarios []struct {
			Runs   []bench.RunResult
			Ratios map[string]float64
		}
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Kind != "compare" || len(back.Scenarios) != 3 || len(back.Scenarios[2].Runs[0].RSS) == 0 {
		t.Fatalf("compare.json does not read back (%v): %.300s", err, b)
	}
	md, err := os.ReadFile(filepath.Join(out, "compare.md"))
	if err != nil || !bytes.Contains(md, []byte("| tiny N=1 pinned | lmigo |")) || !bytes.Contains(md, []byte("| ratio lmigo |")) || !bytes.Contains(md, []byte("| ratio lmigo-raw |")) || !bytes.Contains(md, []byte("memory target")) {
		t.Fatalf("compare.md (%v):\n%s", err, md)
	}
	for _, f := range []string{"compare-latency-tiny-n1.png", "compare-rss-grow-n2.png"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// e2eRuntimes builds the bootstraps of the runtimes named so.
func e2eRuntimes(t *testing.T, names ...string) []target.Runtime {
	t.Helper()
	pkgOf := map[string]string{target.Lmigo: target.PkgLmigo, target.LmigoRaw: target.PkgLmigoRaw, target.AWSLambdaGo: target.PkgAWSLambdaGo, target.Floor: target.PkgFloor}
	var rts []target.Runtime
	var pkgs, bins []string
	for _, name := range names {
		rt := target.Runtime{Name: name, Binary: filepath.Join(t.TempDir(), name), SurvivesPanic: strings.HasPrefix(name, target.Lmigo)}
		rts, pkgs, bins = append(rts, rt), append(pkgs, pkgOf[name]), append(bins, rt.Binary)
	}
	if err := target.Build(t.Context(), target.HostArch(), pkgs, bins); err != nil {
		t.Fatal(err)
	}
	return rts
}

// e2eSettings are a comparison at a tiny scale: two repetitions, short
// pauses, throttles retried, progress kept for the log; and a temporary
// directory for the reports.
func e2eSettings(t *testing.T) (s bench.Settings, out string) {
	s = bench.DefaultSettings()
	s.Warmup, s.Reps, s.Rounds = 20, 2, 1
	s.Idle, s.Settle = 300*time.Millisecond, 100*time.Millisecond
	s.SampleEvery = 20 * time.Millisecond
	s.OnThrottle, s.Progress, s.Stderr = bench.ThrottleRetry, "off", &bytes.Buffer{}
	return s, filepath.Join(t.TempDir(), "out")
}

// e2eRun runs the rows for rts, logs the table and writes the reports.
func e2eRun(t *testing.T, s bench.Settings, out string, rows []bench.Row, rts []target.Runtime) *Report {
	t.Helper()
	var scs []bench.Scenario
	for _, r := range rows {
		sc, err := bench.NewScenario(s, r)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	res, err := bench.Execute(t.Context(), s, scs, rts)
	if err != nil {
		t.Fatal(err)
	}
	rep := New("compare", s, s, scs, rts, res)
	var table bytes.Buffer
	PrintTable(&table, rep)
	if err := Write(rep, out, "compare", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	return rep
}

// checkRun holds one run's accounting and figures to what the scenario
// sent: every invocation handed out answered exactly once, by the driver's
// count and the API's, no violation, numbers in a sane range.
func checkRun(t *testing.T, sc bench.Scenario, r bench.RunResult) {
	t.Helper()
	name := sc.Name + " " + r.Runtime
	l, api, m := r.Load, r.API, r.Metrics
	answered := l.OK + l.FuncErrors + l.Wrong
	want := int64(sc.Count + sc.Warmup)
	if answered != want || l.Wrong != 0 || l.Failures != 0 || l.Abandoned != 0 {
		t.Errorf("%s: answered %d (wrong %d, failures %d, abandoned %d), want %d", name, answered, l.Wrong, l.Failures, l.Abandoned, want)
	}
	if api == nil {
		t.Fatalf("%s: no API stats", name)
	}
	if api.Invocations != answered || api.Answered() != answered || api.Responses != answered || api.Errors != 0 {
		t.Errorf("%s: API handed out %d, answered %d, responses %d, errors %d; driver answered %d",
			name, api.Invocations, api.Answered(), api.Responses, api.Errors, answered)
	}
	if api.CrossWired != 0 || target.Echoes(r.Runtime) && api.NoEcho != 0 {
		t.Errorf("%s: %d answers cross-wired, %d without the invocation ID echo", name, api.CrossWired, api.NoEcho)
	}
	if api.Violations != 0 || api.MaxOutstanding > int64(sc.N) || api.Throttles != l.Throttles {
		t.Errorf("%s: violations %d, max outstanding %d (N=%d), throttles API %d driver %d",
			name, api.Violations, api.MaxOutstanding, sc.N, api.Throttles, l.Throttles)
	}
	if m[bench.Invocations] != float64(sc.Count) {
		t.Errorf("%s: measured %v invocations, want %d", name, m[bench.Invocations], sc.Count)
	}
	for key, lim := range map[string][2]float64{
		bench.Throughput:      {1, 1e7},
		bench.P50:             {1, 10e6},
		bench.MaxLatency:      {1, 60e6},
		bench.CPUPerInv:       {0, 1e6}, // 10 ms ticks: a short run may see none
		bench.DriverCPUPerInv: {0, 1e6},
		bench.PeakRSS:         {1, 4096},
		bench.RSSAfter:        {1, 4096},
		bench.Ready:           {0.01, 30e3},
		bench.ConnsInit:       {1, 64},
	} {
		v, ok := m[key]
		if !ok || v < lim[0] || v > lim[1] {
			t.Errorf("%s: %s = %v (present %v), want in [%v, %v]", name, key, v, ok, lim[0], lim[1])
		}
	}
	if m[bench.P50] > m[bench.P99] || m[bench.P99] > m[bench.MaxLatency]*1.001 {
		t.Errorf("%s: percentiles out of order: %v", name, m)
	}
	if sc.PinCPU >= 0 && r.CPUs != "0" {
		t.Errorf("%s: runtime ran on CPUs %q, want pinned to 0", name, r.CPUs)
	}
	if sc.Work.Waved() && len(r.RSS) < 2 {
		t.Errorf("%s: %d RSS samples", name, len(r.RSS))
	}
}

// TestBelowSatEndToEnd runs the below-saturation set at a tiny scale
// against the fake Runtime API, lmigo, aws-lambda-go and the floor
// interleaved, two repetitions: the open model with a tiny and an
// I/O-bound handler, and a burst of grown stacks; then checks the
// accounting, that the handlers waited, the tables and their targets, and,
// where perf is installed, the scheduler's share of lmigo and the floor.
func TestBelowSatEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three bootstraps")
	}
	rts := e2eRuntimes(t, target.Lmigo, target.AWSLambdaGo, target.Floor)
	s, out := e2eSettings(t)
	s.Count, s.Profile = 120, "auto"
	if measure.PerfAvailable() != nil {
		s.Profile = "off" // as -profile auto without perf
	}
	rep := e2eRun(t, s, out, []bench.Row{
		{Workload: "tiny", N: 8, Rate: 400},
		{Workload: "wait:20ms", N: 16, Rate: 400},
		{Workload: "stack:32KiB", N: 8},
	}, rts)

	profiles := s.Profile != "off"
	for _, sr := range rep.Scenarios {
		sc := sr.Scenario
		var measured, profiled []bench.RunResult
		for _, r := range sr.Runs {
			if len(r.Problems) > 0 {
				t.Errorf("%s %s rep %d: %s", sc.Name, r.Runtime, r.Rep, strings.Join(r.Problems, "; "))
				continue
			}
			if r.Profiled {
				profiled = append(profiled, r)
				if _, ok := r.Metrics[bench.SchedPct]; !ok {
					t.Errorf("%s %s: profiled, but no share: %q", sc.Name, r.Runtime, r.Warnings)
				}
				continue
			}
			measured = append(measured, r)
			checkRun(t, sc, r)
			if wait := 20e3; sc.Workload == "wait:20ms" && r.Metrics[bench.P50] < wait {
				t.Errorf("%s %s: p50 %vµs, below the handler's wait", sc.Name, r.Runtime, r.Metrics[bench.P50])
			}
		}
		serving := len(rts)
		if sc.Work.Waved() {
			serving-- // the floor does not grow stacks
		}
		if len(measured) != serving*s.Reps {
			t.Errorf("%s: %d measured runs, want %d", sc.Name, len(measured), serving*s.Reps)
		}
		wantProfiles := 0
		if profiles && sc.Model == load.ModelOpen {
			wantProfiles = 2 // lmigo and the floor
		}
		if len(profiled) != wantProfiles {
			t.Errorf("%s: %d profiled runs, want %d", sc.Name, len(profiled), wantProfiles)
		}
		if v := verdicts(rep, sr, target.Lmigo, func(string) bool { return true }); v == "-" {
			t.Errorf("%s: lmigo has no targets", sc.Name)
		}
	}
	if rows := belowSatRows(rep); len(rows) != 1+3+3+2 {
		t.Errorf("below-saturation table: %d rows, want a header and 8", len(rows))
	}
	if rows := latencyRows(rep); len(rows) != 1+3 {
		t.Errorf("latency table: %d rows, want a header and 3", len(rows))
	}
	md, err := os.ReadFile(filepath.Join(out, "compare.md"))
	if err != nil || !bytes.Contains(md, []byte(belowSatTitle)) || !bytes.Contains(md, []byte(latencyTitle)) || !bytes.Contains(md, []byte("| wait:20ms N=16 at 400/s | lmigo |")) {
		t.Fatalf("compare.md (%v):\n%s", err, md)
	}
}
