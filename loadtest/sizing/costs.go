package sizing

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lmigo/lmigo/loadtest/show"
)

// Events of one function seldom cost alike: a batch consumer's batches
// hold 1 or 100 records. Little's law takes the mean wall time, which a
// few costly events raise far above the median; the report shows how the
// costs spread, per events file where they come from several.

// eventCosts are the costs of each group of a load, by file name.
func eventCosts(groups map[string]*hdrhistogram.Histogram) []EventCost {
	var out []EventCost
	for _, file := range slices.Sorted(maps.Keys(groups)) {
		h := groups[file]
		out = append(out, EventCost{
			File: file, Invocations: h.TotalCount(), MeanMS: h.Mean() / 1e6,
			P50MS: float64(h.ValueAtPercentile(50)) / 1e6, P99MS: float64(h.ValueAtPercentile(99)) / 1e6,
			MaxMS: float64(h.Max()) / 1e6,
		})
	}
	return out
}

// skewed is how far the mean may rise over the median before the report
// says that a few costly events weigh most.
const skewed = 1.5

// spreadLine says how the wall time of one invocation spread at N=1.
func spreadLine(one Step) string {
	s := fmt.Sprintf("At N=1, one invocation at a time, the wall time was: mean %s, p50 %s, p90 %s, p99 %s, max %s.",
		show.Millis(one.MeanMS), show.Millis(one.P50MS), show.Millis(one.P90MS), show.Millis(one.P99MS), show.Millis(one.MaxMS))
	if one.P50MS > 0 && one.MeanMS > skewed*one.P50MS {
		s += fmt.Sprintf(" The mean is %.1f× the median: a few costly events weigh most, and Little's law takes the mean (the slots an arrival rate keeps busy are the rate times the mean wall time).",
			one.MeanMS/one.P50MS)
	}
	return s
}

// costTable is the table of the costs per events file, nil for one file.
func costTable(costs []EventCost) [][]string {
	if len(costs) < 2 {
		return nil
	}
	t := [][]string{{"events file", "invocations", "mean", "p50", "p99", "max"}}
	for _, c := range costs {
		t = append(t, []string{c.File, strconv.FormatInt(c.Invocations, 10), show.Millis(c.MeanMS), show.Millis(c.P50MS), show.Millis(c.P99MS), show.Millis(c.MaxMS)})
	}
	return t
}
