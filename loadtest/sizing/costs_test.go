package sizing

import (
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lmigo/lmigo/loadtest/load"
)

// TestSizeTakesTheMean: Little's law takes the mean wall time at N=1, not
// the median: a stream consumer with batches of 1 to 100 records (p50
// 5.7 ms, mean 17.4 ms, 90% waiting) keeps about 20 in flight on 2 CPUs,
// not 6.5; the report says how far the mean is from the median.
func TestSizeTakesTheMean(t *testing.T) {
	one := Step{N: 1, Invocations: 170, Throughput: 57, MeanMS: 17.4, P50MS: 5.7, P90MS: 40, P99MS: 31, MaxMS: 33,
		CPUMS: 1.74, BaseRSSMiB: 10, PeakRSSMiB: 10, Linear: true}
	two := one
	two.N, two.Throughput, two.Invocations = 2, 114, 340
	p := &Profile{VCPUs: 2, MachineCPUs: 2, Steps: []Step{one, two}}
	if err := p.summarize(func(int, float64) (*Check, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if p.WallMS != 17.4 || p.LittleKnee < 19.9 || p.LittleKnee > 20.1 {
		t.Errorf("wall %.1f ms, Little's knee %.1f: want the mean 17.4 ms and 2 × 17.4 / 1.74 = 20", p.WallMS, p.LittleKnee)
	}
	line := spreadLine(one)
	for _, w := range []string{"mean 17.4ms, p50 5.70ms", "The mean is 3.1× the median", "Little's law takes the mean"} {
		if !strings.Contains(line, w) {
			t.Errorf("spread line %q lacks %q", line, w)
		}
	}
	if even := spreadLine(Step{MeanMS: 5, P50MS: 5}); strings.Contains(even, "costly") {
		t.Errorf("events of one cost said to spread: %q", even)
	}
}

func TestEventCosts(t *testing.T) {
	groups := map[string]*hdrhistogram.Histogram{"02-big.json": load.NewHist(), "01-small.json": load.NewHist()}
	for range 9 {
		_ = groups["01-small.json"].RecordValue(int64(time.Millisecond))
	}
	_ = groups["02-big.json"].RecordValue(int64(30 * time.Millisecond))
	costs := eventCosts(groups)
	if len(costs) != 2 || costs[0].File != "01-small.json" || costs[0].Invocations != 9 || costs[1].MeanMS < 29.9 || costs[1].MeanMS > 30.1 {
		t.Fatalf("costs %+v", costs)
	}
	table := costTable(costs)
	if len(table) != 3 || table[0][0] != "events file" || table[2][0] != "02-big.json" {
		t.Errorf("table %q", table)
	}
	if costTable(costs[:1]) != nil {
		t.Error("a table for one file")
	}
}
