package report

import (
	"fmt"
	"io"
	"time"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
)

// column is one metric of the summary tables.
type column struct {
	key, label string
	format     func(float64) string
}

var columns = []column{
	{bench.Throughput, "inv/s", show.Count},
	{bench.P50, "p50", show.Latency},
	{bench.P90, "p90", show.Latency},
	{bench.P99, "p99", show.Latency},
	{bench.P999, "p99.9", show.Latency},
	{bench.MaxLatency, "max", show.Latency},
	{bench.CPUPerInv, "CPU/inv", show.Latency},
	{bench.DriverCPUPerInv, "drv CPU", show.Latency},
	{bench.PeakRSS, "peak RSS", show.MiB},
	{bench.RSSBefore, "RSS before", show.MiB},
	{bench.RSSAfter, "RSS after", show.MiB},
	{bench.RSSGrowth, "after-before", show.MiBDelta},
	{bench.GCsPer1k, "GC/1k", show.One},
	{bench.ConnsPer1k, "conns/1k", show.One},
	{bench.Ready, "ready", show.MS},
	{bench.ReadyCPU, "ready CPU", show.MS},
	{bench.ThrottlesPer1k, "thr/1k", show.One},
	{bench.RejectedPct, "rej %", show.Pct},
}

// rows builds the summary table: per scenario one row per runtime (the
// medians) and, for two runtimes, one row of ratios.
func rows(rep *Report) [][]string {
	head := []string{"scenario", "runtime"}
	for _, c := range columns {
		head = append(head, c.label)
	}
	out := [][]string{head}
	for _, sr := range rep.Scenarios {
		first := true
		for _, rt := range rep.Runtimes {
			if !rt.Serves(sr.Scenario.Work) {
				continue // not run (the floor for grow): see the notes
			}
			row := []string{"", rt.Name}
			if first {
				row[0], first = scenarioLabel(sr.Scenario), false
			}
			med := sr.Medians[rt.Name]
			for _, c := range columns {
				row = append(row, cell(med, c.key, c.format))
			}
			out = append(out, row)
		}
		ratioRow := func(label string, rs map[string]float64) {
			row := []string{"", label}
			for _, c := range columns {
				row = append(row, cell(rs, c.key, show.Ratio))
			}
			out = append(out, row)
		}
		if sr.Ratios != nil {
			label := "ratio"
			if len(sr.MoreRatios) > 0 {
				label = "ratio " + rep.Runtimes[0].Name
			}
			ratioRow(label, sr.Ratios)
		}
		for _, rt := range rep.Runtimes {
			if rs, ok := sr.MoreRatios[rt.Name]; ok {
				ratioRow("ratio "+rt.Name, rs)
			}
		}
		for _, rt := range rep.Runtimes {
			if rs, ok := sr.FloorRatios[rt.Name]; ok {
				ratioRow(rt.Name+" vs floor", rs)
			}
		}
	}
	return out
}

// PrintTable writes the summary for the terminal.
func PrintTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "\nlmigo load test (%s): target %s, %s, %d CPUs, %s, %s, %d repetition(s), %s\n\n",
		rep.Kind, rep.Settings.Target, rep.Host.CPUModel, rep.Host.CPUs, rep.Host.Arch, rep.Host.GoVersion, rep.Settings.Reps, time.Duration(rep.Elapsed).Round(time.Second))
	show.Aligned(w, rows(rep))
	if bs := belowSatRows(rep); len(bs) > 1 {
		fmt.Fprintf(w, "\n%s\n\n", belowSatTitle)
		show.Aligned(w, bs)
	}
	if ls := latencyRows(rep); len(ls) > 1 {
		fmt.Fprintf(w, "\n%s\n\n", latencyTitle)
		show.Aligned(w, ls)
	}
	fmt.Fprintln(w)
	for _, l := range summaryLines(rep) {
		fmt.Fprintln(w, "- "+l)
	}
	printAccounting(w, rep)
}
