package main

import (
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

// TestProfiledRunsApart: a profiled run gives the medians its profile and
// nothing else; the measured runs give everything else.
func TestProfiledRunsApart(t *testing.T) {
	sr := scenarioReport{Runs: []bench.RunResult{
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
