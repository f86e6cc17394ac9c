package report

import (
	"slices"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

// summarize computes the medians per runtime and the ratios.
func summarize(sr *ScenarioReport, rts []target.Runtime) {
	sr.Medians = map[string]map[string]float64{}
	for _, rt := range rts {
		vals := map[string][]float64{}
		for _, run := range sr.Runs {
			if run.Runtime != rt.Name || len(run.Problems) > 0 {
				continue
			}
			for k, v := range run.Metrics {
				if bench.ProfileMetric(k) == run.Profiled {
					vals[k] = append(vals[k], v)
				}
			}
		}
		med := map[string]float64{}
		for k, vs := range vals {
			med[k] = median(vs)
		}
		sr.Medians[rt.Name] = med
	}
	// Ratios of every other runtime against the reference (the first
	// runtime against the second when aws-lambda-go is not there).
	ref := slices.IndexFunc(rts, func(r target.Runtime) bool { return r.Name == target.AWSLambdaGo })
	if ref < 0 && len(rts) == 2 {
		ref = 1
	}
	floor := slices.IndexFunc(rts, func(r target.Runtime) bool { return r.Name == target.Floor })
	if floor >= 0 && floor != ref && len(sr.Medians[target.Floor]) > 0 {
		for i, rt := range rts {
			if i == floor || len(sr.Medians[rt.Name]) == 0 {
				continue
			}
			if sr.FloorRatios == nil {
				sr.FloorRatios = map[string]map[string]float64{}
			}
			sr.FloorRatios[rt.Name] = ratios(sr.Medians[rt.Name], sr.Medians[target.Floor])
		}
	}
	if ref < 0 {
		return
	}
	b := sr.Medians[rts[ref].Name]
	for i, rt := range rts {
		if i == ref || !rt.Serves(sr.Scenario.Work) {
			continue
		}
		rs := ratios(sr.Medians[rt.Name], b)
		if sr.Ratios == nil {
			sr.Ratios = rs // the first runtime's, as with two
			continue
		}
		if sr.MoreRatios == nil {
			sr.MoreRatios = map[string]map[string]float64{}
		}
		sr.MoreRatios[rt.Name] = rs
	}
}

// ratios are the metrics of a over those of b, where both have them.
func ratios(a, b map[string]float64) map[string]float64 {
	rs := map[string]float64{}
	for k, va := range a {
		if k == bench.RSSGrowth {
			continue // a difference, often near 0 or below: no ratio
		}
		if vb, ok := b[k]; ok {
			if r, ok := ratio(va, vb); ok {
				rs[k] = r
			}
		}
	}
	return rs
}

// median of vs (the mean of the middle two for an even count); vs is
// reordered. 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	m := len(vs) / 2
	if len(vs)%2 == 1 {
		return vs[m]
	}
	return (vs[m-1] + vs[m]) / 2
}

// ratio is a/b; 1 when both are 0; not defined when only b is.
func ratio(a, b float64) (float64, bool) {
	switch {
	case b != 0:
		return a / b, true
	case a == 0:
		return 1, true
	}
	return 0, false
}
