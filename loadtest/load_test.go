package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
)

func TestPercentilesMedianRatio(t *testing.T) {
	h := load.NewHist()
	for v := 1; v <= 1000; v++ {
		if err := h.RecordValue(int64(v) * int64(time.Microsecond)); err != nil {
			t.Fatal(err)
		}
	}
	m := map[string]float64{}
	latencyMetrics(h, m)
	for key, want := range map[string]float64{mP50: 500, mP90: 900, mP99: 990, mP999: 999, mMax: 1000} {
		if got := m[key]; got < want*0.999 || got > want*1.001 {
			t.Errorf("%s = %.3f µs, want %v within 0.1%%", key, got, want)
		}
	}

	for _, tt := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b, want float64
		ok         bool
	}{{1, 2, 0.5, true}, {0, 0, 1, true}, {3, 0, 0, false}, {0, 4, 0, true}} {
		if got, ok := ratio(tt.a, tt.b); got != tt.want || ok != tt.ok {
			t.Errorf("ratio(%v, %v) = %v, %v", tt.a, tt.b, got, ok)
		}
	}
}

func TestSummarize(t *testing.T) {
	sr := scenarioReport{Runs: []runResult{
		{Runtime: target.Lmigo, Metrics: map[string]float64{mCPU: 40, mThroughput: 10}},
		{Runtime: target.AWSLambdaGo, Metrics: map[string]float64{mCPU: 100}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{mCPU: 60, mThroughput: 30}},
		{Runtime: target.AWSLambdaGo, Metrics: map[string]float64{mCPU: 80}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{mCPU: 1e9}, Problems: []string{"crashed"}},
	}}
	summarize(&sr, []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}})
	if got := sr.Medians[target.Lmigo][mCPU]; got != 50 {
		t.Errorf("lmigo median CPU %v, want 50 (a run with problems is left out)", got)
	}
	if got := sr.Ratios[mCPU]; got != 50.0/90 {
		t.Errorf("ratio %v, want %v", got, 50.0/90)
	}
	if _, ok := sr.Ratios[mThroughput]; ok {
		t.Errorf("ratio of a metric one runtime lacks")
	}
}

func TestSummarizeThreeRuntimes(t *testing.T) {
	sr := scenarioReport{Runs: []runResult{
		{Runtime: target.Lmigo, Metrics: map[string]float64{mCPU: 40, mRSSGrowth: -1}},
		{Runtime: target.LmigoRaw, Metrics: map[string]float64{mCPU: 20, mRSSGrowth: 2}},
		{Runtime: target.AWSLambdaGo, Metrics: map[string]float64{mCPU: 80, mRSSGrowth: 100}},
	}}
	summarize(&sr, []target.Runtime{{Name: target.Lmigo}, {Name: target.LmigoRaw}, {Name: target.AWSLambdaGo}})
	if got, raw := sr.Ratios[mCPU], sr.MoreRatios[target.LmigoRaw][mCPU]; got != 0.5 || raw != 0.25 {
		t.Errorf("ratios lmigo %v, lmigo-raw %v; want 0.5, 0.25 (against aws-lambda-go)", got, raw)
	}
	if _, ok := sr.Ratios[mRSSGrowth]; ok {
		t.Errorf("a ratio of RSS differences")
	}
}

func TestScenarioNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		want row
		bad  bool
	}{
		{name: "size-1MiB-n1", want: row{workload: "size:1MiB", n: 1, count: 1024}}, // the standard set's
		{name: "tiny-n64-r1000", want: row{workload: "tiny", n: 64, rate: 1000, count: 10000}},
		{name: "wait-100ms-n1600-r1500", want: row{workload: "wait:100ms", n: 1600, rate: 1500, count: 15000}},
		{name: "stack-32KiB-n1600", want: row{workload: "stack:32KiB", n: 1600}},
		{name: "grow-n64", want: row{workload: "grow", n: 64}},
		{name: "size-256KiB-n1", want: row{workload: "size:256KiB", n: 1, count: 4096}},
		{name: "size-6MiB-n4", want: row{workload: "size:6MiB", n: 4, count: 170}},
		{name: "size-1KiB-n2", want: row{workload: "size:1KiB", n: 2, count: 10000}},
		{name: "grow-n32", want: row{workload: "grow", n: 32}},
		{name: "tiny-n8-r2000", want: row{workload: "tiny", n: 8, rate: 2000, count: 20000}},
		{name: "wait-5ms-n4-r250.5", want: row{workload: "wait:5ms", n: 4, rate: 250.5, count: 2505}},
		{name: "mix-panic-n8", want: row{workload: "mix-panic", n: 8}},
		{name: "grow", bad: true},
		{name: "grow-n0", bad: true},
		{name: "tiny-n8-r0", bad: true},
		{name: "tiny-n8-r", bad: true},
		{name: "size-9MiB-n1", bad: true},
		{name: "wait-1us-n1-r10", bad: true},
		{name: "nope-n1", bad: true},
	} {
		got, err := parseScenarioName(tt.name)
		if tt.bad != (err != nil) || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
		if err == nil && got.name() != tt.name {
			t.Errorf("%s: name written back %q", tt.name, got.name())
		}
	}
	for _, set := range []string{setStandard, setSaturation, setBelowSat} {
		for _, name := range setNames(set) {
			if r, err := parseScenarioName(name); err != nil || r.name() != name {
				t.Errorf("set %s: %s reads back as %+v, %v", set, name, r, err)
			}
		}
	}
	if _, err := setRows("fast"); err == nil {
		t.Error("-set fast accepted")
	}
}

// TestOpenScenarioWindow: an open row's window is its schedule, count/rate,
// and a grace for retries, unless -duration is given; a closed row's is
// -duration.
func TestOpenScenarioWindow(t *testing.T) {
	cfg := defaultConfig()
	open, err := newScenario(cfg, row{workload: "wait:20ms", n: 64, rate: 1000, count: 10000})
	if err != nil || open.Model != load.ModelOpen || open.Rate != 1000 || time.Duration(open.Window) != 10*time.Second+load.OpenGrace || open.Name != "wait-20ms-n64-r1000" {
		t.Errorf("open row: %+v, %v", open, err)
	}
	closed, err := newScenario(cfg, row{workload: "tiny", n: 64, count: 10000})
	if err != nil || closed.Model != load.ModelClosed || closed.Rate != 0 || time.Duration(closed.Window) != cfg.Duration || closed.Callers != 64 {
		t.Errorf("closed row: %+v, %v", closed, err)
	}
	stack, err := newScenario(cfg, row{workload: "stack:32KiB", n: 16})
	if err != nil || stack.Model != load.ModelWaves || stack.Count != cfg.Rounds*16 || stack.Warmup != 1 || stack.Idle == 0 {
		t.Errorf("stack row: %+v, %v", stack, err)
	}
	cfg.given = map[string]bool{"duration": true}
	cfg.Duration = time.Second
	if sc, _ := newScenario(cfg, row{workload: "tiny", n: 64, rate: 1000, count: 10000}); time.Duration(sc.Window) != time.Second {
		t.Errorf("open row with -duration 1s: window %v", time.Duration(sc.Window))
	}
	cfg.Model, cfg.Rate = load.ModelOpen, 500
	if sc, _ := newScenario(cfg, row{workload: "tiny", n: 8, count: 100}); sc.Model != load.ModelOpen || sc.Rate != 500 || sc.Name != "tiny-n8-r500" {
		t.Errorf("-model open -rate 500 on a closed row: %+v", sc)
	}
}

func TestTargets(t *testing.T) {
	cfg := defaultConfig()
	cfg.Env = []string{"LMIGO_BUFFER_RETAIN_BYTES=256KiB"}
	sc, err := newScenario(cfg, row{workload: "grow", n: 64})
	if err != nil {
		t.Fatal(err)
	}
	sr := scenarioReport{Scenario: sc, Medians: map[string]map[string]float64{
		target.Lmigo:       {mRSSGrowth: 7.9, mPeakRSS: 41},
		target.LmigoRaw:    {mRSSGrowth: 24.1}, // 64 x 256 KiB + 8 MiB = 24 MiB
		target.AWSLambdaGo: {mRSSGrowth: 900},
	}}
	got := checkTargets(cfg, sr)
	want := []targetCheck{
		{Runtime: target.Lmigo, What: "RSS after - RSS before <= 8 MiB", Value: 7.9, Limit: 8, Holds: true},
		{Runtime: target.Lmigo, What: "peak RSS at N=64 <= 40 MiB", Value: 41, Limit: 40, Holds: false},
		{Runtime: target.LmigoRaw, What: "RSS after - RSS before <= N x retain cap + 8 MiB (64 x 256KiB + 8 MiB)", Value: 24.1, Limit: 24, Holds: false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets:\n%+v\nwant\n%+v", got, want)
	}
}

func TestPanicWorkloadRefused(t *testing.T) {
	cfg := defaultConfig()
	sc, err := newScenario(cfg, row{workload: "mix-panic", n: 2, count: 10})
	if err != nil {
		t.Fatal(err)
	}
	l := beginRun(t.Context(), cfg, &sc, target.Runtime{Name: target.AWSLambdaGo, Binary: "/nonexistent"}, 1, false)
	r := l.finish(t.Context())
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "exits on a panic") {
		t.Fatalf("problems %q, want the workload refused before anything starts", r.Problems)
	}
}
