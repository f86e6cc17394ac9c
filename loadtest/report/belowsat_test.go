package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// TestBelowSatTable: the table of the below-saturation rows, from made-up
// medians: each runtime's figures, lmigo's and aws-lambda-go's against the
// floor's, and lmigo's targets met or missed; the closed model is not in
// it, and the floor does not run stack:S.
func TestBelowSatTable(t *testing.T) {
	rep := floorReport(t, map[string]map[string]map[string]float64{
		"tiny-n64": {
			target.Lmigo: {bench.CPUPerInv: 12},
			target.Floor: {bench.CPUPerInv: 10},
		},
		"tiny-n64-r1000": {
			target.Lmigo:       {bench.CPUPerInv: 150, bench.PeakRSS: 20, bench.P99: 400, bench.SchedPct: 15.2},
			target.AWSLambdaGo: {bench.CPUPerInv: 300, bench.PeakRSS: 25, bench.P99: 900},
			target.Floor:       {bench.CPUPerInv: 140, bench.PeakRSS: 12, bench.P99: 350, bench.SchedPct: 0.8},
		},
		"wait-20ms-n64-r1000": {
			target.Lmigo:       {bench.CPUPerInv: 154, bench.PeakRSS: 28, bench.P99: 21500},
			target.AWSLambdaGo: {bench.CPUPerInv: 420, bench.PeakRSS: 30, bench.P99: 20900},
			target.Floor:       {bench.CPUPerInv: 140, bench.PeakRSS: 12, bench.P99: 20400},
		},
		"stack-32KiB-n1600": {
			target.Lmigo:       {bench.PeakRSS: 90, bench.RSSBefore: 20, bench.RSSAfter: 45, bench.RSSGrowth: 25},
			target.AWSLambdaGo: {bench.PeakRSS: 80, bench.RSSBefore: 18, bench.RSSAfter: 30, bench.RSSGrowth: 12},
		},
	})
	rep.Runtimes = []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}, {Name: target.Floor}}
	s := bench.DefaultSettings()
	for i := range rep.Scenarios {
		rep.Scenarios[i].Targets = checkTargets(s, rep.Scenarios[i])
	}
	rep.FloorTargets = floorTargets(rep)
	want := [][]string{
		{"scenario", "runtime", "CPU/inv", "vs floor", "peak RSS", "vs floor", "p99", "vs floor", "RSS before", "RSS after", "after-before", "startm+stopm", "targets"},
		{"stack:32KiB N=1600", "lmigo", "-", "-", "90.0 MiB", "-", "-", "-", "20.0 MiB", "45.0 MiB", "+25.0 MiB", "-", "missed: RSS after - RSS before"},
		{"", "aws-lambda-go", "-", "-", "80.0 MiB", "-", "-", "-", "18.0 MiB", "30.0 MiB", "+12.0 MiB", "-", "-"},
		{"tiny N=64 at 1000/s", "lmigo", "150µs", "1.07x", "20.0 MiB", "+8.0 MiB", "400µs", "+50µs", "-", "-", "-", "15.2%", "met"},
		{"", "aws-lambda-go", "300µs", "2.14x", "25.0 MiB", "+13.0 MiB", "900µs", "+550µs", "-", "-", "-", "-", "-"},
		{"", "floor", "140µs", "-", "12.0 MiB", "-", "350µs", "-", "-", "-", "-", "0.8%", "-"},
		{"wait:20ms N=64 at 1000/s", "lmigo", "154µs", "1.10x", "28.0 MiB", "+16.0 MiB", "21.5ms", "+1.10ms", "-", "-", "-", "-", "missed: p99"},
		{"", "aws-lambda-go", "420µs", "3.00x", "30.0 MiB", "+18.0 MiB", "20.9ms", "+500µs", "-", "-", "-", "-", "-"},
		{"", "floor", "140µs", "-", "12.0 MiB", "-", "20.4ms", "-", "-", "-", "-", "-", "-"},
	}
	got := belowSatRows(rep)
	if !slices.EqualFunc(got, want, slices.Equal) {
		var b strings.Builder
		show.Aligned(&b, got)
		t.Errorf("table:\n%s", b.String())
		for i := range min(len(got), len(want)) {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("row %d: %q\nwant    %q", i, got[i], want[i])
			}
		}
	}
	var out bytes.Buffer
	rep.Settings = s
	PrintTable(&out, rep)
	if !strings.Contains(out.String(), belowSatTitle) || !bytes.Contains(markdown(rep), []byte("| wait:20ms N=64 at 1000/s | lmigo | 154µs | 1.10x |")) {
		t.Errorf("the table is not in the reports:\n%s", out.String())
	}
	closed := slices.IndexFunc(rep.Scenarios, func(sr ScenarioReport) bool { return sr.Scenario.Name == "tiny-n64" })
	if rows := belowSatRows(&Report{Runtimes: rep.Runtimes, Scenarios: rep.Scenarios[closed : closed+1]}); len(rows) != 1 {
		t.Errorf("closed model only: %d rows, want the header alone", len(rows))
	}
}
