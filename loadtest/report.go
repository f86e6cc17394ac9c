package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/plot"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
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

// scenarioLabel is a scenario as the tables show it.
func scenarioLabel(sc bench.Scenario) string {
	s := fmt.Sprintf("%s N=%d", sc.Workload, sc.N)
	if sc.Model == load.ModelOpen {
		s += " at " + strconv.FormatFloat(sc.Rate, 'f', -1, 64) + "/s"
	}
	if sc.PinCPU >= 0 {
		s += " pinned"
	}
	return s
}

// cell is m[key] formatted, or "-" when the metric is absent.
func cell(m map[string]float64, key string, format func(float64) string) string {
	if v, ok := m[key]; ok {
		return format(v)
	}
	return "-"
}

// rows builds the summary table: per scenario one row per runtime (the
// medians) and, for two runtimes, one row of ratios.
func rows(rep *report) [][]string {
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

// targetCheck is one of the memory targets, checked on the medians
// of a waves scenario (grow, stack:S).
type targetCheck struct {
	Runtime string  `json:"runtime"`
	What    string  `json:"what"`
	Value   float64 `json:"valueMiB"`
	Limit   float64 `json:"limitMiB"`
	Holds   bool    `json:"holds"`
}

// slack is what RSS after the burst may exceed RSS before by, besides the
// buffers the raw handler's workers keep: the 8 MiB allowance.
const slack = 8

// checkTargets checks the memory targets for the waves scenario sr (grow,
// stack:S): for the typed handler (lmigo), RSS after - RSS before <= 8
// MiB, and for grow at N=64 peak RSS <= 40 MiB; for the raw handler
// (lmigo-raw), whose N buffers of 6 MiB are in flight during a wave by
// design, RSS after - RSS before <= N x the retain cap + 8 MiB. aws-lambda-go has no target; a variant of lmigo
// (-extra lmigo-NAME) has the typed handler's. A runtime without medians
// (every run had problems) fails its targets.
func checkTargets(cfg *config, sr scenarioReport) []targetCheck {
	sc := sr.Scenario
	if !sc.Work.Waved() || cfg.Target == target.Lambda {
		return nil
	}
	var out []targetCheck
	add := func(rt, what, key string, limit float64) {
		v, ok := sr.Medians[rt][key]
		out = append(out, targetCheck{Runtime: rt, What: what, Value: v, Limit: limit, Holds: ok && v <= limit})
	}
	for rt := range sr.Medians {
		switch {
		case rt == target.Lmigo || strings.HasPrefix(rt, target.Lmigo+"-") && rt != target.LmigoRaw && rt != target.LmigoHandler: // -extra lmigo-*: the typed handler's
			add(rt, "RSS after - RSS before <= 8 MiB", bench.RSSGrowth, slack)
			if sc.Workload == "grow" && sc.N == 64 {
				add(rt, "peak RSS at N=64 <= 40 MiB", bench.PeakRSS, 40)
			}
		case rt == target.LmigoRaw:
			retain := retainCap(cfg, sc.N)
			add(rt, fmt.Sprintf("RSS after - RSS before <= N x retain cap + 8 MiB (%d x %s + 8 MiB)", sc.N, load.FormatSize(retain)),
				bench.RSSGrowth, float64(sc.N)*float64(retain)/(1<<20)+slack)
		}
	}
	slices.SortFunc(out, func(a, b targetCheck) int {
		if c := strings.Compare(a.Runtime, b.Runtime); c != 0 {
			return c
		}
		return strings.Compare(a.What, b.What)
	})
	return out
}

// retainCap is LMIGO_BUFFER_RETAIN_BYTES as lmigo reads it from the
// environment the load test gives it (-env included).
func retainCap(cfg *config, n int) int {
	env := map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}
	for _, kv := range cfg.Environ(n) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	c, err := limits.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return 0
	}
	return c.BufferRetainBytes
}

// targetLines are the targets of every scenario, one line each.
func targetLines(rep *report) []string {
	var lines []string
	for _, sr := range rep.Scenarios {
		for _, t := range sr.Targets {
			verdict := "holds"
			if !t.Holds {
				verdict = "DOES NOT HOLD"
			}
			lines = append(lines, fmt.Sprintf("memory target, %s, %s: %s: %.1f MiB (limit %.1f MiB): %s",
				scenarioLabel(sr.Scenario), t.Runtime, t.What, t.Value, t.Limit, verdict))
		}
	}
	return lines
}

// summaryLines are the lines under the table: the memory targets, the
// targets against the floor, the notes and the rejection verdicts.
func summaryLines(rep *report) []string {
	return slices.Concat(targetLines(rep), floorTargetLines(rep), rep.Notes, throttleLines(rep))
}

// printTable writes the summary for the terminal.
func printTable(w io.Writer, rep *report) {
	fmt.Fprintf(w, "\nlmigo load test (%s): target %s, %s, %d CPUs, %s, %s, %d repetition(s), %s\n\n",
		rep.Kind, rep.Config.Target, rep.Host.CPUModel, rep.Host.CPUs, rep.Host.Arch, rep.Host.GoVersion, rep.Config.Reps, time.Duration(rep.Elapsed).Round(time.Second))
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

// printAccounting lists what was sent and how it ended, and every problem.
func printAccounting(w io.Writer, rep *report) {
	var total, fe, thr, abandoned int64
	var viol, crossed, noEcho int64
	once := true
	for _, sr := range rep.Scenarios {
		for _, r := range sr.Runs {
			if c, ok := exactlyOnce(r, sr.Scenario.N); ok && !c.holds() {
				once = false
			}
			total += r.Load.Answered()
			fe += r.Load.FuncErrors
			thr += r.Load.Throttles
			abandoned += r.Load.Abandoned
			if r.API != nil {
				viol += r.API.Violations
				crossed += r.API.CrossWired
				if target.Echoes(r.Runtime) {
					noEcho += r.API.NoEcho
				}
			}
		}
	}
	handled := "retried"
	if rep.Config.OnThrottle == bench.ThrottleNext {
		handled = "rejected, not retried"
	}
	fmt.Fprintf(w, "- Accounting: %d invocations answered (warm-up included), %d function errors as asked, %d throttled attempts %s, %d given up when the window closed",
		total, fe, thr, handled, abandoned)
	if rep.Config.Target == target.Fake {
		verdict := "every invocation answered exactly once"
		if !once {
			verdict = "NOT every invocation answered exactly once (see PROBLEM)"
		}
		fmt.Fprintf(w, "; %s, %d protocol violations, %d cross-wired answers, %d answers of lmigo without the invocation ID echo", verdict, viol, crossed, noEcho)
	}
	fmt.Fprintln(w, ".")
	for _, sr := range rep.Scenarios {
		for _, r := range sr.Runs {
			for _, p := range r.Problems {
				fmt.Fprintf(w, "PROBLEM %s %s rep %d: %s\n", r.Scenario, r.Runtime, r.Rep, p)
			}
			for _, p := range r.Warnings {
				fmt.Fprintf(w, "WARNING %s %s rep %d: %s\n", r.Scenario, r.Runtime, r.Rep, p)
			}
		}
	}
}

// markdown renders the report as Markdown, for the docs.
func markdown(rep *report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# lmigo load test: %s\n\n", rep.Kind)
	h := rep.Host
	fmt.Fprintf(&b, "%s, target `%s`, %s (%d CPUs), Linux %s, %s/%s, %s; %d repetition(s); took %s.\n\n",
		rep.Started.UTC().Format("2006-01-02 15:04 MST"), rep.Config.Target, h.CPUModel, h.CPUs, h.Kernel, "linux", h.Arch, h.GoVersion,
		rep.Config.Reps, time.Duration(rep.Elapsed).Round(time.Second))
	if rep.Kind == "run" && len(rep.Scenarios) == 1 && len(rep.Runtimes) == 1 {
		// The terminal's report, line for line.
		glance, details := runLines(rep)
		fmt.Fprintf(&b, "%s.\n\n", runTitle(rep))
		for _, part := range []struct {
			head  string
			lines [][]string
		}{{"At a glance", glance}, {"Details", details}} {
			fmt.Fprintf(&b, "| %s | |\n|---|---|\n", part.head)
			for _, l := range part.lines {
				b.WriteString("| " + strings.Join(l, " | ") + " |\n")
			}
			b.WriteString("\n")
		}
	}
	if rep.Kind != "run" { // a run's figures are its glance and details
		show.MarkdownTable(&b, rows(rep))
		if bs := belowSatRows(rep); len(bs) > 1 {
			fmt.Fprintf(&b, "## %s\n\n", belowSatTitle)
			show.MarkdownTable(&b, bs)
		}
		if ls := latencyRows(rep); len(ls) > 1 {
			fmt.Fprintf(&b, "## %s\n\n", latencyTitle)
			show.MarkdownTable(&b, ls)
		}
	}
	for _, l := range summaryLines(rep) {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n## Runs\n\n| scenario | runtime | rep | invocations | function errors | throttles | abandoned | max polls+in flight | violations | exactly once | problems, warnings |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, sr := range rep.Scenarios {
		for _, r := range sr.Runs {
			maxOut, viol, once := "-", "-", "not checked"
			if c, ok := exactlyOnce(r, sr.Scenario.N); ok {
				once, _, _ = strings.Cut(c.String(), ":")
			}
			if r.API != nil {
				maxOut = fmt.Sprintf("%d / %d", r.API.MaxOutstanding, sr.Scenario.N)
				viol = fmt.Sprint(r.API.Violations)
			}
			probs := "none"
			if all := append(append([]string(nil), r.Problems...), r.Warnings...); len(all) > 0 {
				probs = strings.ReplaceAll(strings.Join(all, "; "), "\n", " ")
				probs = strings.ReplaceAll(probs, "|", "\\|")
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %s | %s | %s | %s |\n", r.Scenario, r.Runtime, r.Rep,
				r.Load.Answered(), r.Load.FuncErrors, r.Load.Throttles, r.Load.Abandoned, maxOut, viol, once, probs)
		}
	}
	return b.Bytes()
}

// belowSatTitle heads the table of belowSatRows.
const belowSatTitle = "Below saturation: medians; vs floor is the ratio to the floor's CPU, the difference to its peak RSS and p99; targets are lmigo's (see the lines below)"

// writeReports writes name.json, name.md and the plots into cfg.Out and
// lists them on stdout.
func writeReports(cfg *config, rep *report, name string) error {
	if cfg.Out == "" {
		return nil
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	// The files are listed by their absolute path: the load test runs in
	// loadtest/ (go -C loadtest), not where its caller is.
	dir, err := filepath.Abs(cfg.Out)
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
	fmt.Fprintf(cfg.stdout, "\nwritten: %s\n", strings.Join(files, " "))
	return errors.Join(errs...)
}

// writePlots draws per scenario the latency percentiles per runtime (the
// medians of the table) and, where the runtime's memory was sampled and
// the scenario is grow (or the run is a single one), its RSS over the run
// of the median repetition.
func writePlots(dir, name string, rep *report) ([]string, error) {
	var files []string
	var errs []error
	for _, sr := range rep.Scenarios {
		sc := sr.Scenario
		title := fmt.Sprintf("%s, N=%d, target %s", sc.Workload, sc.N, rep.Config.Target)
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
func medianRun(sr scenarioReport, runtime string) *bench.RunResult {
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

func abs(v float64) float64 { return max(v, -v) }

// onceCheck is the exactly-once accounting of one run, from the fake
// Runtime API's counters and the driver's.
type onceCheck struct {
	handedOut, answered, lost, duplicated int64
	crossWired, noEcho, driverAnswered    int64
	maxOutstanding, n, violations         int64
	echo                                  bool // the runtime echoes the invocation ID (lmigo)
}

// exactlyOnce is r's accounting, or false when the target has no fake
// API to count on (rie, lambda).
func exactlyOnce(r bench.RunResult, n int) (onceCheck, bool) {
	st := r.API
	if st == nil {
		return onceCheck{}, false
	}
	answered := st.Responses + st.Errors
	return onceCheck{
		handedOut: st.Invocations, answered: answered, lost: max(st.Invocations-answered, 0),
		duplicated: st.Duplicates, crossWired: st.CrossWired, noEcho: st.NoEcho,
		driverAnswered: r.Load.Answered(),
		maxOutstanding: st.MaxOutstanding, n: int64(n), violations: st.Violations,
		echo: target.Echoes(r.Runtime),
	}, true
}

// holds says whether every invocation handed out was answered once, to
// the right caller, and the runtime never held more than N.
func (c onceCheck) holds() bool {
	return c.answered == c.handedOut && c.driverAnswered == c.answered && c.lost == 0 && c.duplicated == 0 &&
		c.crossWired == 0 && (!c.echo || c.noEcho == 0) && c.maxOutstanding <= c.n && c.violations == 0
}

// String is the check in one line: the verdict, then its figures.
func (c onceCheck) String() string {
	var b strings.Builder
	verdict, eq, le := "yes", "=", "≤"
	if !c.holds() {
		verdict = "NO"
	}
	if c.answered != c.handedOut {
		eq = "≠"
	}
	if c.maxOutstanding > c.n {
		le = ">"
	}
	fmt.Fprintf(&b, "%s: %d handed out %s %d answered once, %d lost, %d duplicated, %d cross-wired, ",
		verdict, c.handedOut, eq, c.answered, c.lost, c.duplicated, c.crossWired)
	if c.echo {
		fmt.Fprintf(&b, "%d without echo, ", c.noEcho)
	} else {
		b.WriteString("echo not expected, ")
	}
	fmt.Fprintf(&b, "max polls + in flight %d %s N=%d", c.maxOutstanding, le, c.n)
	if c.violations > 0 {
		fmt.Fprintf(&b, " (%d violations)", c.violations)
	}
	if c.driverAnswered != c.answered {
		fmt.Fprintf(&b, "; the callers counted %d answers", c.driverAnswered)
	}
	return b.String()
}

// onceLine is the exactly-once line of r for the reports.
func onceLine(r bench.RunResult, n int) string {
	if c, ok := exactlyOnce(r, n); ok {
		return c.String()
	}
	return fmt.Sprintf("not checked (only the fake Runtime API counts hand-outs); %d answered, %d accepted without an answer", r.Load.Answered(), r.Load.Failures)
}

// overloadBusy is the share of N busy on average above which a throttle
// is read as overload: below it, the slots were mostly free and only a
// burst found them all busy.
const overloadBusy = 0.8

// throttleMeaning says what the throttles of a run of sc mean, so that a
// reader takes neither the closed loop's race nor a burst for overload:
// measured and warm are those of the measured window and of the warm-up,
// m the run's figures.
func throttleMeaning(sc bench.Scenario, measured, warm int64, m map[string]float64) string {
	switch {
	case sc.Model == load.ModelOpen && measured+warm == 0:
		return fmt.Sprintf("at %.0f/s every invoke found a slot polling; a throttle here would mean overload", sc.Rate)
	case sc.Model == load.ModelOpen:
		// Little's law: the slots busy on average are the rate times the
		// latency. Far below N, the slots were free but for moments.
		busy := sc.Rate * m[bench.P50] / 1e6
		cpu := ""
		if c, ok := m[bench.CPUPerInv]; ok && m[bench.Throughput] > 0 {
			cpu = fmt.Sprintf(", the runtime using %.0f%% of a CPU", c*m[bench.Throughput]/1e4)
		}
		inFlight := fmt.Sprintf("rate × p50 latency ≈ %.1f invocations in flight for N=%d slots%s", busy, sc.N, cpu)
		switch {
		case measured == 0:
			return "all in the warm-up: the first invocations of a cold start arrived before every slot had polled; a burst, not overload (" + inFlight + ")"
		case busy < overloadBusy*float64(sc.N):
			return "a burst, not overload: " + inFlight + "; invocations that arrived together (a cold start's first, or after a stall of this machine) found the other slots busy for a moment"
		}
		return fmt.Sprintf("overload: %s; at %.0f/s the runtime fell behind (more offered than N serve, or a machine too busy to run it)", inFlight, sc.Rate)
	case sc.Model == load.ModelWaves:
		return "waves of N are sent at once, before every slot has polled again: that race, not overload"
	case sc.Callers > sc.N:
		return fmt.Sprintf("%d closed-loop callers for N=%d slots: more offered than N serve", sc.Callers, sc.N)
	}
	return "closed loop: each caller re-sends the instant it is answered, before the runtime's next /next is registered; not overload (-model open measures that)"
}

// runLines are the lines of the report of a single runtime (kind run):
// the figures at a glance, then the details. Terminal and Markdown show
// the same lines.
func runLines(rep *report) (glance, details [][]string) {
	sr := rep.Scenarios[0]
	sc := sr.Scenario
	m := sr.Medians[rep.Runtimes[0].Name]
	get := func(key string, f func(float64) string) string { return cell(m, key, f) }
	add := func(to *[][]string, k, v string) { *to = append(*to, []string{k, v}) }

	lat := strings.Join([]string{
		get(bench.P50, show.Latency), get(bench.P90, show.Latency), get(bench.P99, show.Latency), get(bench.P999, show.Latency), get(bench.MaxLatency, show.Latency)}, " / ")
	// What was offered and what was answered are two figures: below
	// capacity they agree, above it they part.
	switch sc.Model {
	case load.ModelOpen:
		add(&glance, "offered rate", fmt.Sprintf("%.0f invocations/s, open loop: each sent at its due time, never waiting for an answer", sc.Rate))
		lat += " (from the intended send time)"
	case "waves":
		add(&glance, "offered load", fmt.Sprintf("waves of %d invocations at once", sc.N))
	default:
		add(&glance, "offered load", fmt.Sprintf("%d callers, each sending its next invocation the moment it has an answer (closed loop)", sc.Callers))
	}
	add(&glance, "answered rate", get(bench.Throughput, show.Count)+" invocations/s in the measured window")
	add(&glance, "latency p50 / p90 / p99 / p99.9 / max", lat)
	cpu := get(bench.CPUPerInv, show.Latency)
	if c, ok := m[bench.CPUPerInv]; ok && m[bench.Throughput] > 0 {
		cpu += fmt.Sprintf(" (%.0f%% of a CPU at %s/s)", c*m[bench.Throughput]/1e4, show.Count(m[bench.Throughput]))
	}
	add(&glance, "runtime CPU per invocation", cpu)
	add(&glance, "  read as", cpuReading(sc))
	add(&glance, "runtime peak RSS / RSS after", get(bench.PeakRSS, show.MiB)+" / "+get(bench.RSSAfter, show.MiB))

	handled := "retried"
	if rep.Config.OnThrottle == bench.ThrottleNext {
		handled = "not retried"
	}
	for _, r := range sr.Runs {
		l := r.Load
		add(&glance, "exactly once", onceLine(r, sc.N))
		// The share is the measured window's; the count is too, and the
		// warm-up's are said apart.
		measured := int64(math.Round(m[bench.ThrottlesPer1k] * m[bench.Invocations] / 1000))
		thr := fmt.Sprintf("%d (%s of attempts)", measured, get(bench.RejectedPct, show.Pct))
		if warm := l.Throttles - measured; warm > 0 {
			thr += fmt.Sprintf(", %d in the warm-up", warm)
		}
		meaning := throttleMeaning(sc, measured, l.Throttles-measured, m)
		if r.Exited != "" {
			meaning = "the function exited (PROBLEM below): no slot of it polled after that"
		}
		add(&details, "throttled attempts, "+handled, thr+": "+meaning)
		add(&details, "invocations answered", fmt.Sprintf("%d (%d ok, %d function errors as asked, %d wrong), %d measured after %d warm-up",
			l.Answered(), l.OK, l.FuncErrors, l.Wrong, int64(m[bench.Invocations]), sc.Warmup))
		if r.CPUs != "" {
			add(&details, "runtime's CPUs", r.CPUs)
		}
		if r.Output != nil {
			add(&details, "the function's output", r.Output.Words())
		}
	}
	add(&details, "exec to N polls outstanding", get(bench.Ready, show.MS))
	add(&details, "GCs in the measured window", get(bench.GCs, show.Count)+" ("+get(bench.GCsPer1k, show.One)+" per 1000)")
	add(&details, "TCP connections: at init / per 1000 after", get(bench.ConnsInit, show.Count)+" / "+get(bench.ConnsPer1k, show.One))
	return glance, details
}

func fromUS(v float64) time.Duration { return time.Duration(v * 1e3) }
