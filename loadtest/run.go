package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/report"
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
	rep := report.New("run", cfg, cfg.Settings, []bench.Scenario{sc}, rts, res)
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
		rep.Notes = report.RunNotes(rep)
		report.PrintRun(cfg.stdout, rep)
		if werr := report.Write(rep, cfg.Out, "run", cfg.stdout); werr != nil {
			err = errors.Join(err, werr)
		}
		if err == nil && rep.Problems() > 0 {
			err = fmt.Errorf("%d run(s) had problems (see above)", rep.Problems())
		}
		// The last line: what the run proves and what it does not.
		fmt.Fprintln(cfg.stdout, report.RunVerdict(rep))
	}
	return err
}
