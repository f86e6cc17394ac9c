package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
)

// floorReport is a report of the given scenarios' medians by runtime.
func floorReport(t *testing.T, meds map[string]map[string]map[string]float64) *Report {
	t.Helper()
	rep := &Report{Runtimes: []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}, {Name: target.Floor}, {Name: target.LmigoHandler}, {Name: target.AWSLambdaGoHandler}}}
	names := make([]string, 0, len(meds))
	for name := range meds {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r, err := bench.ParseScenarioName(name)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := bench.NewScenario(bench.DefaultSettings(), r)
		if err != nil {
			t.Fatal(err)
		}
		sc.PinCPU = -1
		rep.Scenarios = append(rep.Scenarios, ScenarioReport{Scenario: sc, Medians: meds[name]})
	}
	return rep
}

func TestFloorTargets(t *testing.T) {
	rep := floorReport(t, map[string]map[string]map[string]float64{
		"tiny-n64": {
			target.Lmigo: {bench.CPUPerInv: 12, bench.Throughput: 10000},
			target.Floor: {bench.CPUPerInv: 10, bench.Throughput: 11000},
		},
		"tiny-n1600": {
			target.Lmigo: {bench.CPUPerInv: 13, bench.Throughput: 8999, bench.PeakRSS: 46.25, bench.Ready: 100},
			target.Floor: {bench.CPUPerInv: 10, bench.Throughput: 9000, bench.PeakRSS: 24, bench.Ready: 90},
		},
		"size-1MiB-n1": {
			target.Lmigo: {bench.CPUPerInv: 300},
			target.Floor: {bench.CPUPerInv: 100},
		},
		"size-6MiB-n1": {
			target.Floor:              {bench.CPUPerInv: 600}, // every lmigo run had problems
			target.LmigoHandler:       {bench.CPUPerInv: 900, bench.PeakRSS: 17},
			target.AWSLambdaGoHandler: {bench.CPUPerInv: 2000, bench.PeakRSS: 16.9},
		},
	})
	got := map[string]bool{}
	for _, c := range floorTargets(rep) {
		if c.Runtime == target.LmigoHandler {
			c.What = "handler " + c.What
		}
		got[c.Scenario+": "+c.What] = c.Met
	}
	want := map[string]bool{
		"tiny N=64: CPU/inv <= 1.2x floor":                    true,  // 12 <= 12
		"tiny N=1600: CPU/inv <= 1.2x floor":                  false, // 13 > 12
		"tiny N=1600: peak RSS <= floor + 16 MiB + 4 KiB x N": true,  // 46.25 <= 24 + 16 + 6.25
		"tiny N=1600: exec to N polls <= 1.2x floor":          true,
		// 8999 >= 10000 x 0.9 x 9000/11000 (7364): the floor lost more.
		"tiny N=1600: inv/s >= 0.9x inv/s at N=64 x what the floor keeps (0.82x)": true,
		"size:1MiB N=1: CPU/inv <= 2x floor":                                      false,
		"size:6MiB N=1: CPU/inv <= 2x floor":                                      false, // no figures
		// lmigo-handler has these two only.
		"size:6MiB N=1: handler CPU/inv <= 1.5x floor":               true, // 900 <= 900
		"size:6MiB N=1: handler peak RSS <= aws-lambda-go-handler's": false,
	}
	expectTargets(t, rep, got, want, []string{
		"floor target, tiny N=1600, lmigo: CPU/inv <= 1.2x floor: 13µs (floor 10µs, 1.30x; limit 12µs): NOT met",
		"floor target, tiny N=1600, lmigo: peak RSS <= floor + 16 MiB + 4 KiB x N: 46.2 MiB (floor 24.0 MiB, 1.93x; limit 46.2 MiB): met",
		"floor target, size:6MiB N=1, lmigo: CPU/inv <= 2x floor: no figures (floor 600µs; limit 1.20ms): NOT met",
		"floor target, size:6MiB N=1, lmigo-handler: peak RSS <= aws-lambda-go-handler's: 17.0 MiB (aws-lambda-go-handler 16.9 MiB, 1.01x; limit 16.9 MiB): NOT met",
	})
}

// TestThroughputTarget: inv/s at N=1600 against N=64 allows the floor's own
// fall-off, and only that; without the floor's figures it is the plain 0.9x.
func TestThroughputTarget(t *testing.T) {
	for _, c := range []struct {
		name         string
		lmigo, floor [2]float64 // inv/s at N=64, N=1600; zero: no figures
		met          bool
		limit        float64
		what         string
	}{
		{"floor holds, lmigo falls", [2]float64{10000, 8999}, [2]float64{9000, 9500}, false, 9000, " x what the floor keeps (1.06x)"},
		{"floor holds, lmigo holds", [2]float64{10000, 9000}, [2]float64{9000, 9500}, true, 9000, " x what the floor keeps (1.06x)"},
		{"both fall alike", [2]float64{10000, 7500}, [2]float64{9000, 7200}, true, 7200, " x what the floor keeps (0.80x)"},
		{"lmigo falls further", [2]float64{10000, 7100}, [2]float64{9000, 7200}, false, 7200, " x what the floor keeps (0.80x)"},
		{"no floor", [2]float64{10000, 8999}, [2]float64{}, false, 9000, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			meds := map[string]map[string]map[string]float64{"tiny-n64": {}, "tiny-n1600": {}}
			for i, sc := range []string{"tiny-n64", "tiny-n1600"} {
				meds[sc][target.Lmigo] = map[string]float64{bench.Throughput: c.lmigo[i]}
				if c.floor[i] > 0 {
					meds[sc][target.Floor] = map[string]float64{bench.Throughput: c.floor[i]}
				}
			}
			var got []FloorCheck
			for _, fc := range floorTargets(floorReport(t, meds)) {
				if strings.HasPrefix(fc.What, "inv/s") {
					got = append(got, fc)
				}
			}
			if len(got) != 1 {
				t.Fatalf("%d throughput targets, want 1: %+v", len(got), got)
			}
			if g := got[0]; g.Met != c.met || math.Abs(g.Limit-c.limit) > 1e-6 || g.What != "inv/s >= 0.9x inv/s at N=64"+c.what {
				t.Errorf("met %v, limit %v, what %q; want %v, %v, %q", g.Met, g.Limit, g.What, c.met, c.limit, c.what)
			}
		})
	}
}

func TestFloorTargetsNeedTheFloor(t *testing.T) {
	rep := floorReport(t, map[string]map[string]map[string]float64{
		"tiny-n64": {target.Lmigo: {bench.CPUPerInv: 12}},
	})
	if got := floorTargets(rep); len(got) != 0 {
		t.Errorf("targets without the floor's figures: %v", got)
	}
}

func TestVsFloorRows(t *testing.T) {
	rts := []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}, {Name: target.Floor}}
	tiny, _ := load.ParseWorkload("tiny")
	grow, _ := load.ParseWorkload("grow")
	rep := &Report{Runtimes: rts}
	for _, sc := range []bench.Scenario{{Name: "tiny-n1", Workload: "tiny", N: 1, PinCPU: -1, Work: tiny}, {Name: "grow-n1", Workload: "grow", N: 1, PinCPU: -1, Work: grow}} {
		sr := ScenarioReport{Scenario: sc}
		for _, rt := range rts {
			if rt.Serves(sc.Work) {
				sr.Runs = append(sr.Runs, bench.RunResult{Runtime: rt.Name, Metrics: map[string]float64{bench.CPUPerInv: map[string]float64{target.Lmigo: 12, target.AWSLambdaGo: 40, target.Floor: 10}[rt.Name]}})
			}
		}
		summarize(&sr, rts)
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	if got := rep.Scenarios[0].FloorRatios[target.Lmigo][bench.CPUPerInv]; got != 1.2 {
		t.Errorf("lmigo vs floor CPU %v, want 1.2", got)
	}
	var labels []string
	for _, row := range rows(rep)[1:] {
		labels = append(labels, row[0]+"/"+row[1])
	}
	want := []string{
		"tiny N=1/lmigo", "/aws-lambda-go", "/floor", "/ratio lmigo", "/ratio floor", "/lmigo vs floor", "/aws-lambda-go vs floor",
		"grow N=1/lmigo", "/aws-lambda-go", "/ratio", // the floor does not run grow
	}
	if !slices.Equal(labels, want) {
		t.Errorf("rows %q, want %q", labels, want)
	}
}

// TestBelowSatTargets: the open-model rows have targets of their own
// against the floor (CPU for tiny and wait:D; peak RSS and p99 for wait:D
// too), checked for every runtime of lmigo and none other; the closed rows
// keep theirs.
func TestBelowSatTargets(t *testing.T) {
	rep := floorReport(t, map[string]map[string]map[string]float64{
		"tiny-n64": {
			target.Lmigo: {bench.CPUPerInv: 12},
			target.Floor: {bench.CPUPerInv: 10},
		},
		"tiny-n64-r1000": {
			target.Lmigo:       {bench.CPUPerInv: 110},
			target.AWSLambdaGo: {bench.CPUPerInv: 300},
			target.Floor:       {bench.CPUPerInv: 100},
		},
		"tiny-n512-r1000": {
			target.Lmigo: {bench.CPUPerInv: 110.1},
			target.Floor: {bench.CPUPerInv: 100},
		},
		"wait-20ms-n64-r1000": {
			target.Lmigo: {bench.CPUPerInv: 100, bench.PeakRSS: 30, bench.P99: 21500},
			target.Floor: {bench.CPUPerInv: 100, bench.PeakRSS: 14, bench.P99: 20500},
		},
		"wait-50ms-n512-r1500": {
			target.Lmigo:       {bench.CPUPerInv: 111, bench.PeakRSS: 32.1, bench.P99: 51501},
			"lmigo-next":       {bench.CPUPerInv: 90, bench.PeakRSS: 31.5, bench.P99: 50000}, // 4 KiB a slot of 512 above 16 MiB
			target.Floor:       {bench.CPUPerInv: 100, bench.PeakRSS: 14, bench.P99: 50500},
			target.AWSLambdaGo: {bench.CPUPerInv: 1000},
		},
		"wait-100ms-n1600-r1500": {
			target.Floor: {bench.CPUPerInv: 100, bench.PeakRSS: 20, bench.P99: 100500}, // every lmigo run had problems
		},
	})
	rep.Runtimes = append(rep.Runtimes, target.Runtime{Name: "lmigo-next"})
	got := map[string]bool{}
	for _, c := range floorTargets(rep) {
		got[c.Runtime+", "+c.Scenario+": "+c.What] = c.Met
	}
	want := map[string]bool{
		"lmigo, tiny N=64: CPU/inv <= 1.2x floor":                                  true,
		"lmigo, tiny N=64 at 1000/s: CPU/inv <= 1.1x floor":                        true, // 110 <= 110
		"lmigo, tiny N=512 at 1000/s: CPU/inv <= 1.1x floor":                       false,
		"lmigo, wait:20ms N=64 at 1000/s: CPU/inv <= 1.1x floor":                   true,
		"lmigo, wait:20ms N=64 at 1000/s: peak RSS <= floor + 16 MiB + 4 KiB x N":  true, // 30 <= 14 + 16 + 0.25
		"lmigo, wait:20ms N=64 at 1000/s: p99 <= floor + 1 ms":                     true, // 21.5 <= 21.5 ms
		"lmigo, wait:50ms N=512 at 1500/s: CPU/inv <= 1.1x floor":                  false,
		"lmigo, wait:50ms N=512 at 1500/s: peak RSS <= floor + 16 MiB + 4 KiB x N": false, // 32.1 > 14 + 16 + 2
		"lmigo, wait:50ms N=512 at 1500/s: p99 <= floor + 1 ms":                    false,
		// lmigo-next ran in one scenario only: elsewhere, no figures.
		"lmigo-next, tiny N=64: CPU/inv <= 1.2x floor":                                    false,
		"lmigo-next, tiny N=64 at 1000/s: CPU/inv <= 1.1x floor":                          false,
		"lmigo-next, tiny N=512 at 1000/s: CPU/inv <= 1.1x floor":                         false,
		"lmigo-next, wait:20ms N=64 at 1000/s: CPU/inv <= 1.1x floor":                     false,
		"lmigo-next, wait:20ms N=64 at 1000/s: peak RSS <= floor + 16 MiB + 4 KiB x N":    false,
		"lmigo-next, wait:20ms N=64 at 1000/s: p99 <= floor + 1 ms":                       false,
		"lmigo-next, wait:50ms N=512 at 1500/s: CPU/inv <= 1.1x floor":                    true,
		"lmigo-next, wait:50ms N=512 at 1500/s: peak RSS <= floor + 16 MiB + 4 KiB x N":   true,
		"lmigo-next, wait:50ms N=512 at 1500/s: p99 <= floor + 1 ms":                      true,
		"lmigo, wait:100ms N=1600 at 1500/s: CPU/inv <= 1.1x floor":                       false, // no figures
		"lmigo, wait:100ms N=1600 at 1500/s: peak RSS <= floor + 16 MiB + 4 KiB x N":      false,
		"lmigo, wait:100ms N=1600 at 1500/s: p99 <= floor + 1 ms":                         false,
		"lmigo-next, wait:100ms N=1600 at 1500/s: CPU/inv <= 1.1x floor":                  false,
		"lmigo-next, wait:100ms N=1600 at 1500/s: peak RSS <= floor + 16 MiB + 4 KiB x N": false,
		"lmigo-next, wait:100ms N=1600 at 1500/s: p99 <= floor + 1 ms":                    false,
	}
	expectTargets(t, rep, got, want, []string{
		"floor target, wait:50ms N=512 at 1500/s, lmigo: p99 <= floor + 1 ms: 51.5ms (floor 50.5ms, 1.02x; limit 51.5ms): NOT met",
		"floor target, wait:50ms N=512 at 1500/s, lmigo: peak RSS <= floor + 16 MiB + 4 KiB x N: 32.1 MiB (floor 14.0 MiB, 2.29x; limit 32.0 MiB): NOT met",
	})
}

// TestStackTarget: after a burst of grown stacks, the RSS of lmigo and of
// a variant of it (-extra lmigo-NAME) is checked against RSS before it,
// and nothing else is.
func TestStackTarget(t *testing.T) {
	sc, err := bench.NewScenario(bench.DefaultSettings(), bench.Row{Workload: "stack:32KiB", N: 1600})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		growth float64
		holds  bool
	}{{8, true}, {8.1, false}, {-3, true}} {
		sr := ScenarioReport{Scenario: sc, Medians: map[string]map[string]float64{
			target.Lmigo:       {bench.RSSGrowth: tt.growth, bench.PeakRSS: 90},
			"lmigo-before":     {bench.RSSGrowth: 30},
			target.AWSLambdaGo: {bench.RSSGrowth: 50},
		}}
		got := checkTargets(bench.DefaultSettings(), sr)
		want := []TargetCheck{
			{Runtime: target.Lmigo, What: "RSS after - RSS before <= 8 MiB", Value: tt.growth, Limit: 8, Holds: tt.holds},
			{Runtime: "lmigo-before", What: "RSS after - RSS before <= 8 MiB", Value: 30, Limit: 8, Holds: false},
		}
		if !slices.Equal(got, want) {
			t.Errorf("growth %v: %+v, want %+v", tt.growth, got, want)
		}
	}
}

// expectTargets holds the verdicts got (by a key of each check) to want,
// and the lines of rep's floor targets to hold each of lines.
func expectTargets(t *testing.T, rep *Report, got, want map[string]bool, lines []string) {
	t.Helper()
	for k, v := range want {
		if m, ok := got[k]; !ok || m != v {
			t.Errorf("%s: met %v (checked %v), want %v", k, m, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d targets checked, want %d: %v", len(got), len(want), got)
	}
	rep.FloorTargets = floorTargets(rep)
	all := strings.Join(floorTargetLines(rep), "\n")
	for _, l := range lines {
		if !strings.Contains(all, l) {
			t.Errorf("no line %q in:\n%s", l, all)
		}
	}
}
