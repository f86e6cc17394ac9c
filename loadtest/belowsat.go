package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// belowSat says whether sc is a scenario of the below-saturation table:
// the open model, and the grown stacks of stack:S.
func belowSat(sc bench.Scenario) bool {
	return sc.Model == load.ModelOpen || strings.HasPrefix(sc.Workload, "stack:")
}

// belowSatRows is the table of the below-saturation scenarios, the medians
// per runtime: CPU per invocation and its ratio to the floor's, peak RSS
// and p99 and their differences to the floor's, RSS before and after the
// burst (stack:S), the scheduler's share of the CPU (-profile) and, for
// lmigo's runtimes, the targets met or missed (floorTargets,
// checkTargets). Only the header when rep has no such scenario.
func belowSatRows(rep *report) [][]string {
	out := [][]string{{"scenario", "runtime", "CPU/inv", "vs floor", "peak RSS", "vs floor", "p99", "vs floor",
		"RSS before", "RSS after", "after-before", "startm+stopm", "targets"}}
	for _, sr := range rep.Scenarios {
		sc := sr.Scenario
		if !belowSat(sc) {
			continue
		}
		floor := sr.Medians[target.Floor]
		label := scenarioLabel(sc)
		for _, rt := range rep.Runtimes {
			if !rt.Serves(sc.Work) {
				continue
			}
			m := sr.Medians[rt.Name]
			vs := func(key string, format func(float64) string, diff bool) string {
				v, ok := m[key]
				f, okF := floor[key]
				if !ok || !okF || rt.Name == target.Floor {
					return "-"
				}
				if diff {
					return format(v - f)
				}
				if r, ok := ratio(v, f); ok {
					return show.Ratio(r)
				}
				return "-"
			}
			memory := func(key string, format func(float64) string) string {
				if !sc.Work.Waved() {
					return "-" // RSS after is the end of the load: peak RSS says more
				}
				return cell(m, key, format)
			}
			out = append(out, []string{label, rt.Name,
				cell(m, bench.CPUPerInv, show.Latency), vs(bench.CPUPerInv, nil, false),
				cell(m, bench.PeakRSS, show.MiB), vs(bench.PeakRSS, show.MiBDelta, true),
				cell(m, bench.P99, show.Latency), vs(bench.P99, fmtLatencyDelta, true),
				memory(bench.RSSBefore, show.MiB), memory(bench.RSSAfter, show.MiB), memory(bench.RSSGrowth, show.MiBDelta),
				cell(m, bench.SchedPct, show.Pct), verdicts(rep, sr, rt.Name, func(what string) bool { return !latencyTarget(what) }),
			})
			label = ""
		}
	}
	return out
}

// verdicts sums up the targets of runtime in sr that keep takes (by what
// they say): "met" when all are, "missed: " and what was missed
// otherwise, "-" when it has none.
func verdicts(rep *report, sr scenarioReport, runtime string, keep func(what string) bool) string {
	label := scenarioLabel(sr.Scenario)
	var checked int
	var missed []string
	note := func(what string, met bool) {
		checked++
		if !met {
			short, _, _ := strings.Cut(what, " <=")
			if !slices.Contains(missed, short) {
				missed = append(missed, short)
			}
		}
	}
	for _, c := range rep.FloorTargets {
		if c.Runtime == runtime && c.Scenario == label && keep(c.What) {
			note(c.What, c.Met)
		}
	}
	for _, c := range sr.Targets {
		if c.Runtime == runtime && keep(c.What) {
			note(c.What, c.Holds)
		}
	}
	switch {
	case checked == 0:
		return "-"
	case len(missed) == 0:
		return "met"
	}
	return "missed: " + strings.Join(missed, ", ")
}

// fmtLatencyDelta writes a difference of microseconds with its sign.
func fmtLatencyDelta(v float64) string {
	if v < 0 {
		return "-" + show.Latency(-v)
	}
	return "+" + show.Latency(v)
}

// belowSatNotes say how the below-saturation scenarios of scs were run
// and checked, and how the scheduler's share was read.
func belowSatNotes(cfg *config, scs []bench.Scenario, rts []target.Runtime) []string {
	var open, profiled bool
	for _, sc := range scs {
		if sc.Model == load.ModelOpen {
			open = true
			for _, rt := range rts {
				profiled = profiled || cfg.Profiled(sc, rt)
			}
		}
	}
	if !open {
		return nil
	}
	ns := []string{"Open model (WORKLOAD-nN-rR, \"at R/s\"): invocation i is sent at start + i/R by the clock alone, each from a goroutine of its own, so no send waits for an answer; its latency runs from that time. wait:D is an I/O-bound handler: it waits D (the demo's sleep_ms; the floor's time.Sleep in its slot's goroutine), then answers as tiny. Targets below saturation, lmigo's against the floor of the same run: CPU/inv <= 1.1x (tiny, wait:D), peak RSS <= floor + 16 MiB and p99 <= floor + 1 ms (wait:D); stack:S: RSS after - RSS before <= 8 MiB."}
	switch perf := measure.PerfAvailable(); {
	case profiled:
		ns = append(ns, fmt.Sprintf("startm+stopm: the share of the runtime's CPU samples whose stack holds runtime.startm or runtime.stopm (the scheduler waking an idle P to look for work, and putting it back to sleep), kernel frames below them included: perf record -e cpu-clock -F %d -g on the runtime's process during the measured load, in one more run of each of lmigo's runtimes and the floor after the measured ones; that run's other figures are not in the medians.", measure.PerfHz))
	case perf != nil && cfg.Flags["profile"] == "auto" && cfg.Target != target.Lambda:
		ns = append(ns, "startm+stopm: not measured: "+perf.Error()+".")
	}
	return append(ns, latencyNote(scs)...)
}
