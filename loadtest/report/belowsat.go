package report

import (
	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// belowSatTitle heads the table of belowSatRows.
const belowSatTitle = "Below saturation: medians; vs floor is the ratio to the floor's CPU, the difference to its peak RSS and p99; targets are lmigo's (see the lines below)"

// belowSatRows is the table of the below-saturation scenarios, the medians
// per runtime: CPU per invocation and its ratio to the floor's, peak RSS
// and p99 and their differences to the floor's, RSS before and after the
// burst (stack:S), the scheduler's share of the CPU (-profile) and, for
// lmigo's runtimes, the targets met or missed (floorTargets,
// checkTargets). Only the header when rep has no such scenario.
func belowSatRows(rep *Report) [][]string {
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
