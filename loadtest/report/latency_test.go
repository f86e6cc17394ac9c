package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

// TestLatencyRows: the latency table, from made-up runs: each runtime's
// median p50 and p99, their ratios to the floor's, the lowest and highest
// p99 ratio of a rep to the floor's same rep, and lmigo's latency targets
// alone; wait:D and the closed model have no rows.
func TestLatencyRows(t *testing.T) {
	rep := floorReport(t, map[string]map[string]map[string]float64{
		"tiny-n64":            {target.Lmigo: {bench.P50: 10, bench.P99: 100}, target.Floor: {bench.P50: 10, bench.P99: 50}},
		"wait-20ms-n64-r1000": {target.Lmigo: {bench.P50: 20100, bench.P99: 30000}, target.Floor: {bench.P50: 20100, bench.P99: 20400}},
	})
	rep.Runtimes = []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}, {Name: target.Floor}}
	runs := func(sc string, p99 map[string][]float64, p50 map[string]float64) ScenarioReport {
		r, err := bench.ParseScenarioName(sc)
		if err != nil {
			t.Fatal(err)
		}
		s, err := bench.NewScenario(bench.DefaultSettings(), r)
		if err != nil {
			t.Fatal(err)
		}
		sr := ScenarioReport{Scenario: s}
		for rep := range 3 {
			for _, rt := range rep3Order {
				sr.Runs = append(sr.Runs, bench.RunResult{Runtime: rt, Rep: rep + 1, Metrics: map[string]float64{bench.P50: p50[rt], bench.P99: p99[rt][rep]}})
			}
		}
		summarize(&sr, []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}, {Name: target.Floor}})
		return sr
	}
	rep.Scenarios = append(rep.Scenarios,
		// p50 1.10x (met), p99 median 450 against 300: 1.5x (missed); by
		// rep 400/200, 450/300, 600/500.
		runs("tiny-n64-r1000", map[string][]float64{
			target.Lmigo: {400, 450, 600}, target.AWSLambdaGo: {900, 1000, 1100}, target.Floor: {200, 300, 500},
		}, map[string]float64{target.Lmigo: 110, target.AWSLambdaGo: 300, target.Floor: 100}),
		// p50 1.11x (missed), p99 1.30x (met).
		runs("tiny-n512-r1000", map[string][]float64{
			target.Lmigo: {260, 260, 260}, target.AWSLambdaGo: {900, 900, 900}, target.Floor: {200, 200, 200},
		}, map[string]float64{target.Lmigo: 111, target.AWSLambdaGo: 300, target.Floor: 100}),
	)
	rep.FloorTargets = floorTargets(rep)
	want := [][]string{
		{"scenario", "runtime", "p50", "vs floor", "p99", "vs floor", "by rep", "targets"},
		{"tiny N=64 at 1000/s", "lmigo", "110µs", "1.10x", "450µs", "1.50x", "1.20x–2.00x", "missed: p99"},
		{"", "aws-lambda-go", "300µs", "3.00x", "1.00ms", "3.33x", "2.20x–4.50x", "-"},
		{"", "floor", "100µs", "-", "300µs", "-", "-", "-"},
		{"tiny N=512 at 1000/s", "lmigo", "111µs", "1.11x", "260µs", "1.30x", "1.30x", "missed: p50"},
		{"", "aws-lambda-go", "300µs", "3.00x", "900µs", "4.50x", "4.50x", "-"},
		{"", "floor", "100µs", "-", "200µs", "-", "-", "-"},
	}
	got := latencyRows(rep)
	if !slices.EqualFunc(got, want, slices.Equal) {
		for i := range max(len(got), len(want)) {
			var g, w []string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !slices.Equal(g, w) {
				t.Errorf("row %d: %q\nwant    %q", i, g, w)
			}
		}
	}
	// The below-saturation table leaves the latency targets to this one:
	// lmigo has no other target on tiny here.
	for _, row := range belowSatRows(rep)[1:] {
		if strings.HasPrefix(row[0], "tiny") && row[len(row)-1] != "-" {
			t.Errorf("below-saturation row %q holds a latency target", row)
		}
	}
	lines := strings.Join(floorTargetLines(rep), "\n")
	for _, l := range []string{
		"floor target, tiny N=64 at 1000/s, lmigo: p99 <= 1.3x floor: 450µs (floor 300µs, 1.50x; limit 390µs): NOT met",
		"floor target, tiny N=512 at 1000/s, lmigo: p50 <= 1.1x floor: 111µs (floor 100µs, 1.11x; limit 110µs): NOT met",
		"floor target, tiny N=512 at 1000/s, lmigo: p99 <= 1.3x floor: 260µs (floor 200µs, 1.30x; limit 260µs): met",
	} {
		if !strings.Contains(lines, l) {
			t.Errorf("no line %q in:\n%s", l, lines)
		}
	}
}

// rep3Order is the order runs of one rep come in (interleaved).
var rep3Order = []string{target.Lmigo, target.AWSLambdaGo, target.Floor}

// TestRepRatios: a rep counts when the runtime and the floor both measured
// it (no problem, not a profile run) and the floor's figure is above 0.
func TestRepRatios(t *testing.T) {
	run := func(rt string, rep int, p99 float64) bench.RunResult {
		return bench.RunResult{Runtime: rt, Rep: rep, Metrics: map[string]float64{bench.P99: p99}}
	}
	bad := run(target.Floor, 2, 100)
	bad.Problems = []string{"exited"}
	profiled := run(target.Floor, 4, 100)
	profiled.Profiled = true
	tests := []struct {
		name string
		runs []bench.RunResult
		want []float64
	}{
		{"none", nil, nil},
		{"paired by rep, sorted", []bench.RunResult{run(target.Lmigo, 1, 300), run(target.Floor, 1, 200), run(target.Lmigo, 2, 100), run(target.Floor, 2, 100)}, []float64{1, 1.5}},
		{"floor's rep had a problem", []bench.RunResult{run(target.Lmigo, 2, 300), bad}, nil},
		{"floor's run is a profile", []bench.RunResult{run(target.Lmigo, 4, 300), profiled}, nil},
		{"floor did not run", []bench.RunResult{run(target.Lmigo, 1, 300), run(target.AWSLambdaGo, 1, 200)}, nil},
		{"floor's figure is 0", []bench.RunResult{run(target.Lmigo, 1, 300), run(target.Floor, 1, 0)}, nil},
		{"no figure", []bench.RunResult{{Runtime: target.Lmigo, Rep: 1, Metrics: map[string]float64{}}, run(target.Floor, 1, 100)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := repRatios(ScenarioReport{Runs: tt.runs}, target.Lmigo, bench.P99); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
