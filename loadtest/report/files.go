package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/plot"
)

// Write writes name.json, name.md and the plots into out and
// lists them on stdout; nothing with out "".
func Write(rep *Report, out, name string, stdout io.Writer) error {
	if out == "" {
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// The files are listed by their absolute path: the load test runs in
	// loadtest/ (go -C loadtest), not where its caller is.
	dir, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	var files []string
	var errs []error
	write := func(file string, data []byte) {
		p := filepath.Join(dir, file)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			errs = append(errs, err)
			return
		}
		files = append(files, p)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	write(name+".json", append(js, '\n'))
	write(name+".md", markdown(rep))
	pngs, err := writePlots(dir, name, rep)
	files = append(files, pngs...)
	errs = append(errs, err)
	fmt.Fprintf(stdout, "\nwritten: %s\n", strings.Join(files, " "))
	return errors.Join(errs...)
}

// writePlots draws per scenario the latency percentiles per runtime (the
// medians of the table) and, where the runtime's memory was sampled and
// the scenario is grow (or the run is a single one), its RSS over the run
// of the median repetition.
func writePlots(dir, name string, rep *Report) ([]string, error) {
	var files []string
	var errs []error
	for _, sr := range rep.Scenarios {
		sc := sr.Scenario
		title := fmt.Sprintf("%s, N=%d, target %s", sc.Workload, sc.N, rep.Settings.Target)
		if sc.PinCPU >= 0 {
			title += ", pinned"
		}
		var lat []plot.LatencySeries
		var rss []plot.RSSSeries
		for _, rt := range rep.Runtimes {
			med := sr.Medians[rt.Name]
			s := plot.LatencySeries{Name: rt.Name}
			for _, q := range []struct {
				q   float64
				key string
			}{{0.5, bench.P50}, {0.9, bench.P90}, {0.99, bench.P99}, {0.999, bench.P999}, {1, bench.MaxLatency}} {
				if v, ok := med[q.key]; ok {
					s.Points = append(s.Points, plot.Percentile{Q: q.q, Value: fromUS(v)})
				}
			}
			lat = append(lat, s)
			if run := medianRun(sr, rt.Name); run != nil {
				r := plot.RSSSeries{Name: rt.Name}
				for _, x := range run.RSS {
					r.Points = append(r.Points, plot.RSSPoint{T: x.At, Bytes: x.RSS})
				}
				rss = append(rss, r)
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("%s-latency-%s.png", name, sc.Name))
		if err := plot.LatencyPNG(p, "Latency: "+title, lat); err == nil {
			files = append(files, p)
		} else if !errors.Is(err, plot.ErrEmpty) {
			errs = append(errs, err)
		}
		if sr.Scenario.Work.Waved() || rep.Kind == "run" {
			p := filepath.Join(dir, fmt.Sprintf("%s-rss-%s.png", name, sc.Name))
			if err := plot.RSSPNG(p, rssTitle+title, rss); err == nil {
				files = append(files, p)
			} else if !errors.Is(err, plot.ErrEmpty) {
				errs = append(errs, err)
			}
		}
	}
	return files, errors.Join(errs...)
}

// rssTitle heads the RSS plot: what it shows (rssCaption says how to read it).
const rssTitle = "Runtime RSS from exec (VmRSS every 100 ms): "

// medianRun is the good run of runtime whose peak RSS is the median one.
func medianRun(sr ScenarioReport, runtime string) *bench.RunResult {
	var runs []*bench.RunResult
	for i := range sr.Runs {
		r := &sr.Runs[i]
		if r.Runtime == runtime && len(r.Problems) == 0 && len(r.RSS) > 0 {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil
	}
	want := sr.Medians[runtime][bench.PeakRSS]
	best := runs[0]
	for _, r := range runs[1:] {
		if abs(r.Metrics[bench.PeakRSS]-want) < abs(best.Metrics[bench.PeakRSS]-want) {
			best = r
		}
	}
	return best
}
