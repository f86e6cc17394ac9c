package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// The demo's load (`make run`): an open loop at demoRate, about a tenth
// of what N=8 slots serve of mix-panic closed-loop on a small machine
// (4000 to 5000/s on 2 CPUs), for demoCount invocations (2 s). Below
// capacity an invoke finds a slot polling, so throttles are about 0 and
// any is a sign of overload (or of a machine too busy to run the
// runtime). In the closed loop each caller re-sends the instant it is
// answered, before the runtime's next /next is registered, and about
// half the attempts are throttled whatever the runtime does. At 1000/s
// a quiet 2-CPU machine already saw 0.3 to 1.2% throttled, from bursts
// of the mix's slow items: twice the headroom keeps them at 0.
const (
	demoRate        = 500
	demoCount       = 1000
	demoClosedCount = 4000 // -model closed without -count
)

// runMain is `loadtest run` (and `make run`): one runtime, one scenario.
// By default the demo: lmigo's reference bootstrap under a few seconds of
// the mix-panic workload at N=8 from the fake Runtime API, open loop.
func runMain(ctx context.Context, args []string) error {
	return runCommand(ctx, args, os.Stdout, os.Stderr)
}

// runCommand is runMain writing to stdout and stderr.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := defaultConfig()
	cfg.stdout, cfg.Stderr = stdout, stderr
	cfg.Reps, cfg.Count, cfg.Warmup, cfg.N, cfg.Runtime = 1, demoCount, 100, 8, target.Lmigo
	cfg.Model, cfg.Rate = load.ModelOpen, demoRate
	fs := flag.NewFlagSet("loadtest run", flag.ContinueOnError)
	cfg.register(fs)
	fs.StringVar(&cfg.Runtime, "runtime", cfg.Runtime, "the runtime: lmigo (builds ./cmd/bootstrap), lmigo-raw (./loadtest/rawbootstrap) aws-lambda-go (./loadtest/refbootstrap) or floor (./loadtest/floorbootstrap: tiny, size:S and wait:D only); for event:NAME, ./loadtest/events/lmigo or ./loadtest/events/awslambdago")
	fs.StringVar(&cfg.Bootstrap, "bootstrap", "", "your function: a bootstrap binary, or a zip as lmigo-pack writes it; it runs in the AWS emulator (-target rie) unless -target says otherwise, with the empty event {} or -events. With -runtime: a prebuilt bootstrap of that runtime")
	fs.StringVar(&cfg.Workload, "workload", "", "tiny, size:S, wait:D, mix, mix-panic, grow, stack:S or event:NAME (default: mix-panic for lmigo, mix otherwise); your function (-bootstrap) takes -events")
	fs.StringVar(&cfg.Events, "events", "", "your JSON events: a file of one event, a JSON array of events or one event a line, or a directory of such .json files; invocation i sends event i, cycled")
	fs.BoolVar(&cfg.Shuffle, "shuffle", false, "with -events: send the events shuffled (the same order every run) instead of in the file's order")
	fs.StringVar(&cfg.Expect, "expect", "", "with -events or -bootstrap: a right answer's body matches this regular expression (default: a right answer is neither an error nor an HTTP door's response with a statusCode of 400 or more)")
	fs.IntVar(&cfg.N, "n", cfg.N, "AWS_LAMBDA_MAX_CONCURRENCY")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest run [flags]\n\nOne runtime under one load, then a report. Without flags: lmigo's reference bootstrap, mix-panic, N=8, open loop at %d/s, a few seconds.\nYour function: loadtest run -bootstrap PATH -events FILE [-model open -rate R] [-n N].\n", demoRate)
		fs.PrintDefaults()
	}
	if err := cfg.parse(fs, args); err != nil {
		return err
	}
	if cfg.Model == load.ModelClosed && !cfg.given["count"] {
		// Closed-loop callers go flat out: 2 s hold more than demoCount.
		cfg.Count = demoClosedCount
		cfg.Flags["count"] = fmt.Sprint(cfg.Count)
	}
	if !slices.Contains([]string{target.Lmigo, target.LmigoRaw, target.AWSLambdaGo, target.Floor}, cfg.Runtime) {
		return fmt.Errorf("-runtime %q: want lmigo, lmigo-raw, aws-lambda-go or floor", cfg.Runtime)
	}
	rt := target.Runtime{Name: cfg.Runtime, Binary: cfg.Bootstrap, SurvivesPanic: cfg.Runtime != target.AWSLambdaGo && cfg.Runtime != target.Floor}
	// A bootstrap without -runtime is the user's function: it answers
	// the user's events, not the demo's contract.
	if cfg.Bootstrap != "" && !cfg.given["runtime"] {
		bin, cleanup, err := target.UserBootstrap(cfg.Bootstrap)
		if err != nil {
			return inputError("-bootstrap", cfg.Bootstrap, err)
		}
		defer cleanup()
		rt = target.Runtime{Name: target.Function, Binary: bin, SurvivesPanic: true}
		if cfg.Workload != "" && cfg.Workload != "tiny" {
			return fmt.Errorf("-workload %s needs the demo's handler (cmd/bootstrap); give your function its own events with -events FILE", cfg.Workload)
		}
		if !cfg.given["target"] {
			cfg.Target = target.Default(cfg.Stderr)
			if !cfg.given["on-throttle"] {
				cfg.OnThrottle = bench.DefaultOnThrottle(cfg.Target)
			}
			cfg.Flags["target"], cfg.Flags["on-throttle"] = cfg.Target, cfg.OnThrottle
		}
		if err := cfg.useEvents(); err != nil {
			return err
		}
	} else if cfg.Events != "" {
		if err := cfg.useEvents(); err != nil {
			return err
		}
	}
	if cfg.Workload == "" {
		cfg.Workload = "mix"
		if rt.Name == target.Floor {
			cfg.Workload = "tiny"
		} else if rt.SurvivesPanic {
			cfg.Workload = "mix-panic"
		}
	}
	sc, err := bench.NewScenario(cfg.Settings, bench.Row{Workload: cfg.Workload, N: max(cfg.N, 1)})
	if err != nil {
		return err
	}
	rts := []target.Runtime{rt}
	if cfg.Target == target.Lambda {
		rts[0].Binary, rts[0].Function = "", cfg.Function
	} else {
		cleanup, err := target.BuildMissing(ctx, rts, cfg.Workload, "-runtime", cfg.Stderr)
		if err != nil {
			return err
		}
		defer cleanup()
	}
	if rt.Name == target.Function && cfg.Target != target.Lambda {
		if cfg.Output, err = target.CreateOutput(cfg.Out, "run-function.log"); err != nil {
			return err
		}
		defer func() { _ = cfg.Output.Close() }() // closed below; again, should the run end early
	}
	stop := bench.Answers(&cfg.Settings, sc.Warmup+sc.Count)
	res, err := bench.Execute(ctx, cfg.Settings, []bench.Scenario{sc}, rts)
	rep := newReport("run", cfg, []bench.Scenario{sc}, rts, res)
	stop()
	if cfg.Output != nil && rep != nil {
		err = errors.Join(err, cfg.Output.Close())
		c := cfg.Output.Summary()
		for _, sr := range rep.Scenarios {
			for i := range sr.Runs {
				sr.Runs[i].Output = &c
			}
		}
	}
	if rep != nil && len(rep.Scenarios) == 1 {
		rep.Notes = runNotes(cfg, sc)
		if cfg.Target != target.Lambda {
			rep.Notes = append(rep.Notes, rssCaption(rep.Scenarios[0].Medians[rep.Runtimes[0].Name]))
		}
		printRun(cfg.stdout, rep)
		if werr := writeReports(cfg, rep, "run"); werr != nil {
			err = errors.Join(err, werr)
		}
		if err == nil && rep.problems() > 0 {
			err = fmt.Errorf("%d run(s) had problems (see above)", rep.problems())
		}
		// The last line: what the run proves and what it does not.
		fmt.Fprintln(cfg.stdout, runVerdict(rep))
	}
	return err
}

// printRun writes the report of a single runtime: what ran, the figures
// at a glance (the rates offered and answered, latency, CPU, memory, the
// exactly-once accounting), then the details, one line per figure.
func printRun(w io.Writer, rep *report) {
	fmt.Fprintf(w, "\n%s\n", runTitle(rep))
	glance, details := runLines(rep)
	lines := indent(glance)
	lines = append(lines, []string{"details:"})
	lines = append(lines, indent(details)...)
	show.Aligned(w, lines)
	printAccounting(w, rep)
}

// runTitle says what ran: runtime, workload, N, load model and bounds.
func runTitle(rep *report) string {
	sc := rep.Scenarios[0].Scenario
	offered := fmt.Sprintf("%d closed-loop callers", sc.Callers)
	switch sc.Model {
	case load.ModelOpen:
		offered = fmt.Sprintf("open loop at %.0f/s", sc.Rate)
	case load.ModelWaves:
		offered = fmt.Sprintf("waves of %d, %d rounds, then %s idle", sc.N, sc.Rounds, time.Duration(sc.Idle))
	}
	what := sc.Workload
	if sc.Events != "" {
		what = sc.Events
	}
	return fmt.Sprintf("%s: %s at N=%d, %s, target %s, at most %d invocations or %s",
		rep.Runtimes[0].Name, what, sc.N, offered, rep.Config.Target, sc.Count, time.Duration(sc.Window))
}

func indent(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append([]string{"  " + r[0]}, r[1:]...)
	}
	return out
}

// cpuReading says why a run's CPU per invocation is not the README's
// figure, which is tiny invocations at N=64 with the runtime saturated
// (a closed loop: each caller re-sends the moment it is answered).
func cpuReading(sc bench.Scenario) string {
	var why []string
	if sc.Model == load.ModelOpen {
		why = append(why, "below saturation, where each invocation wakes an idle runtime")
	}
	if sc.Workload == load.EventsWorkload {
		why = append(why, "the user's events")
	} else if sc.Workload != "tiny" {
		why = append(why, fmt.Sprintf("%s (%s), more work than tiny invocations", sc.Workload, workloadWords(sc.Workload)))
	}
	if sc.N != 64 {
		why = append(why, fmt.Sprintf("N=%d", sc.N))
	}
	const readme = "the README's CPU figure is tiny invocations at N=64, the runtime saturated (make loadtest)"
	if len(why) == 0 {
		return "as " + readme
	}
	return "this run: " + strings.Join(why, "; ") + "; " + readme
}

// workloadWords says what a workload sends, in a few words.
func workloadWords(name string) string {
	const mix = "answers up to 64 KiB, a sleep, CPU work, an error"
	switch {
	case name == "tiny":
		return "an empty event, a small answer"
	case name == "mix":
		return mix
	case name == "mix-panic":
		return mix + ", a panic"
	case name == "grow":
		return "waves of answers up to 6 MiB"
	case strings.HasPrefix(name, "size:"):
		return "answers of " + strings.TrimPrefix(name, "size:")
	case strings.HasPrefix(name, load.EventPrefix):
		return "a realistic event, typed"
	case name == load.EventsWorkload:
		return "the user's events"
	}
	return name
}

// runNotes explain the figures of a run's report, and only those.
func runNotes(cfg *config, sc bench.Scenario) []string {
	var ns []string
	switch cfg.Target {
	case target.Fake:
		ns = append(ns, "The runtime runs against the fake LMI Runtime API, inside the load test. Runtime CPU per invocation is the runtime process's user+sys time (/proc/PID/stat) over the measured window, divided by the invocations answered in it; the load test's own CPU is not in it, though it shares the machine.")
	case target.RIE:
		ns = append(ns, "The runtime runs in the AWS emulator's LMI mode; CPU per invocation and memory are the runtime's process, the emulator excluded.")
	case target.Lambda:
		ns = append(ns, "The runtime is a deployed function: only what a caller sees is measured; CPU per invocation, memory, GCs and connections are the platform's (-).")
	}
	if sc.Model == load.ModelOpen {
		ns = append(ns, "Latency runs from each invocation's intended send time, so a stall of the runtime counts in every invocation it delayed; percentiles from an HDR histogram.")
	} else {
		ns = append(ns, "Latency is the target's own measure (fake API: from hand-out on /next until the answer is read in full); percentiles from an HDR histogram.")
	}
	if cfg.Reps > 1 {
		ns = append(ns, fmt.Sprintf("Each figure is the median of %d runs.", cfg.Reps))
	}
	ns = append(ns,
		"Peak RSS is the runtime process's VmHWM; RSS after its VmRSS at the end of the load (grow: after the idle period). GCs count its gctrace lines (GODEBUG=gctrace=1); TCP connections are those it opened to the Runtime API.",
		"Throttled attempts are invokes that found no /next pending (Runtime.Unavailable): "+throttleHandling(cfg)+".")
	return ns
}

// rssCaption says what the RSS plot of a run with figures m shows and how
// to read its rise: before the first GC, garbage, not a leak.
func rssCaption(m map[string]float64) string {
	const what = "The RSS plot (run-rss-*.png) is the runtime process's resident memory (VmRSS) every 100 ms from exec to the end of the load. "
	if gcs, ok := m[bench.GCs]; ok && gcs == 0 {
		return what + "No garbage collection ran in the measured window, so RSS rises with the invocations' garbage until the first one: that rise is not a leak (make soak holds memory flat for 10 minutes)."
	}
	return what + "It rises while the slots serve their first invocations and their buffers fill, and falls back at garbage collections; a line that rises across many collections would be a leak."
}

// runVerdict is the last line of a run: what it proves and what it does not.
func runVerdict(rep *report) string {
	sr := rep.Scenarios[0]
	sc := sr.Scenario
	rt := rep.Runtimes[0].Name
	m := sr.Medians[rt]
	if n := rep.problems(); n > 0 || len(sr.Runs) == 0 {
		why := "the run had problems (PROBLEM above)"
		if len(sr.Runs) > 0 && sr.Runs[0].Exited != "" {
			why = fmt.Sprintf("the function exited (%s) during the load (PROBLEM above)", sr.Runs[0].Exited)
		} else if len(sr.Runs) > 0 {
			if l := sr.Runs[0].Load; load.SumCounts(l.HTTPErrors) > 0 {
				why = fmt.Sprintf("%d of %d answers were HTTP errors (%s), which count as wrong unless -expect accepts them; %s",
					load.SumCounts(l.HTTPErrors), l.Answered(), load.HTTPErrorCounts(l.HTTPErrors), why)
			}
		}
		return fmt.Sprintf("verdict: NOT shown: %s, so it proves nothing of %s at N=%d", why, rt, sc.N)
	}
	r := sr.Runs[0]
	offered := fmt.Sprintf("%d closed-loop callers", sc.Callers)
	if sc.Model == load.ModelOpen {
		offered = fmt.Sprintf("%.0f/s offered", sc.Rate)
	}
	answered := fmt.Sprintf("every one of %d invocations answered right", r.Load.Answered())
	if c, ok := exactlyOnce(r, sc.N); ok && c.holds() {
		answered = fmt.Sprintf("every one of %d invocations answered right and exactly once, never more than N in flight", r.Load.Answered())
	}
	what := fmt.Sprintf("%s at N=%d, %s (%s), p99 %s", rt, sc.N, sc.Workload, offered, cell(m, bench.P99, show.Latency))
	var shown []string
	if sc.Model == load.ModelOpen {
		if r.Load.Throttles == 0 {
			shown = append(shown, "no throttle, so no overload")
		} else {
			shown = append(shown, fmt.Sprintf("%d throttles (see their meaning above)", r.Load.Throttles))
		}
	}
	notShown := "how it behaves on Lambda, at saturation (make loadtest) or over hours (make soak)"
	if rt == target.Function {
		notShown = "that its answers are right beyond that check, nor what N and memory it needs (loadtest size)"
	}
	return fmt.Sprintf("verdict: %s: %s%s, on this machine, target %s; it does not show %s.",
		what, answered, prefixed(", ", strings.Join(shown, ", ")), rep.Config.Target, notShown)
}

// prefixed is p+s, or "" for an empty s.
func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
