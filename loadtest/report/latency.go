package report

import (
	"slices"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// Latency rows of the below-saturation set: how long a caller waits for a
// tiny invocation in the open model, from its intended send time to its
// answer read in full. The open model is the fair measure: in a closed
// loop, lmigo queues its next poll behind the answer, so a window from
// hand-out to answer covers work the floor does outside it.

// latencyTitle heads the table of latencyRows.
const latencyTitle = "Below saturation, latency: tiny invocations, open model, from each one's intended send time to its answer read in full; medians of the reps; vs floor is the ratio to the floor's median, by rep the lowest and highest ratio of a rep's p99 to the floor's in the same rep; targets are lmigo's"

// latencyRows is the table of the latency rows: p50 and p99 per runtime,
// each against the floor's, and lmigo's latency targets met or missed.
// Only the header when rep has no such scenario.
func latencyRows(rep *Report) [][]string {
	out := [][]string{{"scenario", "runtime", "p50", "vs floor", "p99", "vs floor", "by rep", "targets"}}
	for _, sr := range rep.Scenarios {
		if !latencyRowsOf(sr.Scenario) {
			continue
		}
		floor := sr.Medians[target.Floor]
		label := scenarioLabel(sr.Scenario)
		for _, rt := range rep.Runtimes {
			if !rt.Serves(sr.Scenario.Work) {
				continue
			}
			m := sr.Medians[rt.Name]
			vs := func(key string) string {
				v, ok := m[key]
				f, okF := floor[key]
				if !ok || !okF || rt.Name == target.Floor {
					return "-"
				}
				if r, ok := ratio(v, f); ok {
					return show.Ratio(r)
				}
				return "-"
			}
			byRep := "-"
			if rs := repRatios(sr, rt.Name, bench.P99); rt.Name != target.Floor && len(rs) > 0 {
				byRep = show.Ratio(rs[0])
				if hi := show.Ratio(rs[len(rs)-1]); hi != byRep {
					byRep += "–" + hi
				}
			}
			out = append(out, []string{label, rt.Name,
				cell(m, bench.P50, show.Latency), vs(bench.P50), cell(m, bench.P99, show.Latency), vs(bench.P99), byRep,
				verdicts(rep, sr, rt.Name, latencyTarget)})
			label = ""
		}
	}
	return out
}

// repRatios are runtime's key over the floor's in the same repetition of
// sr, for every repetition both measured, lowest first: runs next to each
// other in time, so a busy machine moves both.
func repRatios(sr ScenarioReport, runtime, key string) []float64 {
	measured := func(r bench.RunResult) bool { return len(r.Problems) == 0 && !r.Profiled }
	var rs []float64
	for _, run := range sr.Runs {
		if run.Runtime != runtime || !measured(run) {
			continue
		}
		v, ok := run.Metrics[key]
		if !ok {
			continue
		}
		i := slices.IndexFunc(sr.Runs, func(f bench.RunResult) bool { return f.Runtime == target.Floor && f.Rep == run.Rep && measured(f) })
		if i < 0 {
			continue
		}
		if r, ok := ratio(v, sr.Runs[i].Metrics[key]); ok && sr.Runs[i].Metrics[key] > 0 {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	return rs
}
