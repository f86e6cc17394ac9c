package report

import (
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

func TestMedianRatio(t *testing.T) {
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
	sr := ScenarioReport{Runs: []bench.RunResult{
		{Runtime: target.Lmigo, Metrics: map[string]float64{bench.CPUPerInv: 40, bench.Throughput: 10}},
		{Runtime: target.AWSLambdaGo, Metrics: map[string]float64{bench.CPUPerInv: 100}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{bench.CPUPerInv: 60, bench.Throughput: 30}},
		{Runtime: target.AWSLambdaGo, Metrics: map[string]float64{bench.CPUPerInv: 80}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{bench.CPUPerInv: 1e9}, Problems: []string{"crashed"}},
	}}
	summarize(&sr, []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}})
	if got := sr.Medians[target.Lmigo][bench.CPUPerInv]; got != 50 {
		t.Errorf("lmigo median CPU %v, want 50 (a run with problems is left out)", got)
	}
	if got := sr.Ratios[bench.CPUPerInv]; got != 50.0/90 {
		t.Errorf("ratio %v, want %v", got, 50.0/90)
	}
	if _, ok := sr.Ratios[bench.Throughput]; ok {
		t.Errorf("ratio of a metric one runtime lacks")
	}
}

func TestSummarizeThreeRuntimes(t *testing.T) {
	sr := ScenarioReport{Runs: []bench.RunResult{
		{Runtime: target.Lmigo, Metrics: map[string]float64{bench.CPUPerInv: 40, bench.RSSGrowth: -1}},
		{Runtime: target.LmigoRaw, Metrics: map[string]float64{bench.CPUPerInv: 20, bench.RSSGrowth: 2}},
		{Runtime: target.AWSLambdaGo, Metrics: map[string]float64{bench.CPUPerInv: 80, bench.RSSGrowth: 100}},
	}}
	summarize(&sr, []target.Runtime{{Name: target.Lmigo}, {Name: target.LmigoRaw}, {Name: target.AWSLambdaGo}})
	if got, raw := sr.Ratios[bench.CPUPerInv], sr.MoreRatios[target.LmigoRaw][bench.CPUPerInv]; got != 0.5 || raw != 0.25 {
		t.Errorf("ratios lmigo %v, lmigo-raw %v; want 0.5, 0.25 (against aws-lambda-go)", got, raw)
	}
	if _, ok := sr.Ratios[bench.RSSGrowth]; ok {
		t.Errorf("a ratio of RSS differences")
	}
}

// TestProfiledRunsApart: a profiled run gives the medians its profile and
// nothing else; the measured runs give everything else.
func TestProfiledRunsApart(t *testing.T) {
	sr := ScenarioReport{Runs: []bench.RunResult{
		{Runtime: target.Lmigo, Metrics: map[string]float64{bench.CPUPerInv: 100}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{bench.CPUPerInv: 110}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{bench.CPUPerInv: 120}},
		{Runtime: target.Lmigo, Profiled: true, Metrics: map[string]float64{bench.CPUPerInv: 1000, bench.SchedPct: 15, bench.StartmPct: 6, bench.StopmPct: 9}},
	}}
	summarize(&sr, []target.Runtime{{Name: target.Lmigo}})
	if m := sr.Medians[target.Lmigo]; m[bench.CPUPerInv] != 110 || m[bench.SchedPct] != 15 || m[bench.StopmPct] != 9 {
		t.Errorf("medians %v, want CPU 110 from the measured runs, the shares from the profile", m)
	}
}
