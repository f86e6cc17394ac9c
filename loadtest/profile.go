package main

import (
	"strings"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
)

// The scheduler's share of a runtime's CPU (-profile). Below saturation a
// goroutine hand-off readies a goroutine, the Go scheduler wakes an idle P
// to run it (runtime.startm) and, finding nothing, puts it back to sleep
// (runtime.stopm). perf record samples the runtime's process from outside
// while the measured load runs, kernel stacks included, so the wake and
// sleep of the thread under those two functions count in their share. The
// profile is taken in one more run per profiled runtime after the measured
// ones: perf costs CPU on the same machine, and its run's other figures
// are not in the medians.
const (
	mStartm = "startm_pct"       // samples under runtime.startm, % of the runtime's CPU samples
	mStopm  = "stopm_pct"        // under runtime.stopm
	mSched  = "startm_stopm_pct" // under either
	mPerfN  = "perf_samples"     // samples of the profile
)

// profileMetric says whether key is a figure of the profiled run only.
func profileMetric(key string) bool {
	switch key {
	case mStartm, mStopm, mSched, mPerfN:
		return true
	}
	return false
}

// profiled says whether runs of rt in sc are profiled: the open model
// (below saturation), lmigo's runtimes and the floor, when -profile
// allows.
func (c *config) profiled(sc scenario, rt target.Runtime) bool {
	return c.Profile != "off" && c.Target != target.Lambda && sc.Model == load.ModelOpen &&
		(strings.HasPrefix(rt.Name, target.Lmigo) || rt.Name == target.Floor) && rt.Serves(sc.w)
}
