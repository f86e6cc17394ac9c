package main

import (
	"testing"

	"github.com/lmigo/lmigo/loadtest/target"
)

// TestProfiledRunsApart: a profiled run gives the medians its profile and
// nothing else; the measured runs give everything else.
func TestProfiledRunsApart(t *testing.T) {
	sr := scenarioReport{Runs: []runResult{
		{Runtime: target.Lmigo, Metrics: map[string]float64{mCPU: 100}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{mCPU: 110}},
		{Runtime: target.Lmigo, Metrics: map[string]float64{mCPU: 120}},
		{Runtime: target.Lmigo, Profiled: true, Metrics: map[string]float64{mCPU: 1000, mSched: 15, mStartm: 6, mStopm: 9}},
	}}
	summarize(&sr, []target.Runtime{{Name: target.Lmigo}})
	if m := sr.Medians[target.Lmigo]; m[mCPU] != 110 || m[mSched] != 15 || m[mStopm] != 9 {
		t.Errorf("medians %v, want CPU 110 from the measured runs, the shares from the profile", m)
	}
	cfg := defaultConfig()
	cfg.Profile = "auto"
	open, _ := newScenario(cfg, row{workload: "tiny", n: 64, rate: 1000})
	closed, _ := newScenario(cfg, row{workload: "tiny", n: 64})
	stack, _ := newScenario(cfg, row{workload: "stack:32KiB", n: 64})
	for _, tt := range []struct {
		sc   scenario
		rt   string
		want bool
	}{
		{open, target.Lmigo, true}, {open, "lmigo-next", true}, {open, target.Floor, true}, {open, target.AWSLambdaGo, false},
		{closed, target.Lmigo, false}, {stack, target.Lmigo, false},
	} {
		if got := cfg.profiled(tt.sc, target.Runtime{Name: tt.rt}); got != tt.want {
			t.Errorf("profiled(%s, %s) = %v", tt.sc.Name, tt.rt, got)
		}
	}
	cfg.Profile = "off"
	if cfg.profiled(open, target.Runtime{Name: target.Lmigo}) {
		t.Error("profiled with -profile off")
	}
}
