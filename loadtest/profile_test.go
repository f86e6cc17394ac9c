package main

import (
	"testing"
)

// TestProfiledRunsApart: a profiled run gives the medians its profile and
// nothing else; the measured runs give everything else.
func TestProfiledRunsApart(t *testing.T) {
	sr := scenarioReport{Runs: []runResult{
		{Runtime: rtLmigo, Metrics: map[string]float64{mCPU: 100}},
		{Runtime: rtLmigo, Metrics: map[string]float64{mCPU: 110}},
		{Runtime: rtLmigo, Metrics: map[string]float64{mCPU: 120}},
		{Runtime: rtLmigo, Profiled: true, Metrics: map[string]float64{mCPU: 1000, mSched: 15, mStartm: 6, mStopm: 9}},
	}}
	summarize(&sr, []runtimeSpec{{Name: rtLmigo}})
	if m := sr.Medians[rtLmigo]; m[mCPU] != 110 || m[mSched] != 15 || m[mStopm] != 9 {
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
		{open, rtLmigo, true}, {open, "lmigo-next", true}, {open, rtFloor, true}, {open, rtRef, false},
		{closed, rtLmigo, false}, {stack, rtLmigo, false},
	} {
		if got := cfg.profiled(tt.sc, runtimeSpec{Name: tt.rt}); got != tt.want {
			t.Errorf("profiled(%s, %s) = %v", tt.sc.Name, tt.rt, got)
		}
	}
	cfg.Profile = "off"
	if cfg.profiled(open, runtimeSpec{Name: rtLmigo}) {
		t.Error("profiled with -profile off")
	}
}
