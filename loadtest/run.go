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

// runConfig is the settings of `loadtest run`, from its flags.
type runConfig struct {
	bench.Settings
	Workload string `json:"workload,omitempty"`
	N        int    `json:"n,omitempty"`
	Runtime  string `json:"runtime,omitempty"`
	// Bootstrap is the user's function, Events, Shuffle and Expect its
	// events; Bootstraps are the load test's runtimes, prebuilt.
	Bootstrap  string     `json:"-"`
	Events     string     `json:"events,omitempty"`
	Shuffle    bool       `json:"shuffle,omitempty"`
	Expect     string     `json:"expect,omitempty"`
	Bootstraps bootstraps `json:"-"`
	Function   string     `json:"function,omitempty"` // -target lambda
	Out        string     `json:"-"`

	given map[string]bool // the flags given
}

// runMain is `loadtest run` (and `make run`): one runtime, one scenario.
// By default the demo: lmigo's reference bootstrap under a few seconds of
// the mix-panic workload at N=8 from the fake Runtime API, open loop.
func runMain(ctx context.Context, args []string) error {
	return runCommand(ctx, args, os.Stdout, os.Stderr)
}

// runCommand is runMain writing to stdout and stderr.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseRun(args, stderr)
	if err != nil {
		return err
	}
	rt, cleanup, err := cfg.runtime()
	if err != nil {
		return err
	}
	defer cleanup()
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
		defer func() { _ = cfg.Output.Close() }() // closed after the run; again, should it end early
	}
	return cfg.run(ctx, sc, rts, stdout)
}

// parseRun reads run's flags into its config, and checks them.
func parseRun(args []string, stderr io.Writer) (*runConfig, error) {
	cfg := &runConfig{Settings: bench.DefaultSettings(), N: 8, Runtime: target.Lmigo, Out: defaultOut()}
	cfg.Stderr = stderr
	cfg.Reps, cfg.Count, cfg.Warmup = 1, demoCount, 100
	cfg.Model, cfg.Rate = load.ModelOpen, demoRate
	fs := flag.NewFlagSet("loadtest run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	registerBench(fs, &cfg.Settings)
	cfg.Bootstraps.register(fs)
	// The target's default follows -bootstrap (runtime below): say so,
	// in place of the flag's bare default.
	tf := fs.Lookup("target")
	tf.DefValue = ""
	tf.Usage += " (default: fake; with -bootstrap, rie where the AWS emulator can run here, else fake)"
	fs.StringVar(&cfg.Runtime, "runtime", cfg.Runtime, "the runtime: lmigo (builds ./cmd/bootstrap, or -lmigo), lmigo-raw (./loadtest/rawbootstrap, or -raw) aws-lambda-go (./loadtest/refbootstrap, or -ref) or floor (./loadtest/floorbootstrap, or -floor: tiny, size:S and wait:D only); for event:NAME, ./loadtest/events/lmigo or ./loadtest/events/awslambdago")
	fs.StringVar(&cfg.Bootstrap, "bootstrap", "", "your function: a bootstrap binary, or a zip as lmigo-pack writes it; it runs in the AWS emulator (-target rie) unless -target says otherwise or the emulator cannot run here, with the empty event {} or -events; not with -runtime, whose prebuilt bootstrap -lmigo, -raw, -ref or -floor gives")
	fs.StringVar(&cfg.Workload, "workload", "", "tiny, size:S, wait:D, mix, mix-panic, grow, stack:S or event:NAME (default: mix-panic for lmigo, mix otherwise); your function (-bootstrap) takes -events")
	fs.StringVar(&cfg.Events, "events", "", "your JSON events: a file of one event, a JSON array of events or one event a line, or a directory of such .json files; invocation i sends event i, cycled")
	fs.BoolVar(&cfg.Shuffle, "shuffle", false, "with -events: send the events shuffled (the same order every run) instead of in the file's order")
	fs.StringVar(&cfg.Expect, "expect", "", "with -events or -bootstrap: a right answer's body matches this regular expression (default: a right answer is neither an error nor an HTTP door's response with a statusCode of 400 or more)")
	fs.IntVar(&cfg.N, "n", cfg.N, "AWS_LAMBDA_MAX_CONCURRENCY")
	fs.StringVar(&cfg.Function, "function", "", "lambda target: the function (name or ARN) to invoke")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory for the JSON, Markdown and PNG reports (\"\": none)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest run [flags]\n\nOne runtime under one load, then a report. Without flags: lmigo's reference bootstrap, mix-panic, N=8, open loop at %d/s, a few seconds.\nYour function: loadtest run -bootstrap PATH -events FILE [-model open -rate R] [-n N].\n", demoRate)
		fs.PrintDefaults()
	}
	given, err := parseBench(fs, args, &cfg.Settings)
	if err = errors.Join(err, needFunction(cfg.Target, cfg.Function)); err != nil {
		return nil, err
	}
	cfg.given, cfg.Event = given, eventName(cfg.Workload)
	if cfg.Model == load.ModelClosed && !given["count"] {
		// Closed-loop callers go flat out: 2 s hold more than demoCount.
		cfg.Count = demoClosedCount
		cfg.Flags["count"] = fmt.Sprint(cfg.Count)
	}
	if !slices.Contains([]string{target.Lmigo, target.LmigoRaw, target.AWSLambdaGo, target.Floor}, cfg.Runtime) {
		return nil, fmt.Errorf("-runtime %q: want lmigo, lmigo-raw, aws-lambda-go or floor", cfg.Runtime)
	}
	if cfg.Bootstrap != "" && given["runtime"] {
		_, name := cfg.Bootstraps.of(cfg.Runtime)
		return nil, fmt.Errorf("-bootstrap is your function, run with your events, and -runtime %s one of the load test's runtimes: give one of them (a prebuilt bootstrap of %s: %s PATH)", cfg.Runtime, cfg.Runtime, name)
	}
	return cfg, nil
}

// runtime is what the run drives: the user's function (-bootstrap), taken
// from its zip and given its events, or one of the load test's runtimes
// (-runtime), prebuilt or not. cleanup removes what was unzipped.
func (cfg *runConfig) runtime() (rt target.Runtime, cleanup func(), err error) {
	if cfg.Bootstrap == "" {
		bin, _ := cfg.Bootstraps.of(cfg.Runtime)
		rt = target.Runtime{Name: cfg.Runtime, Binary: bin, SurvivesPanic: cfg.Runtime != target.AWSLambdaGo && cfg.Runtime != target.Floor}
		if cfg.Events != "" {
			err = cfg.useEvents()
		}
		return rt, func() {}, err
	}
	// The user's function answers the user's events, not the demo's
	// contract.
	bin, cleanup, err := target.UserBootstrap(cfg.Bootstrap)
	if err != nil {
		return rt, nil, inputError("-bootstrap", cfg.Bootstrap, err)
	}
	rt = target.Runtime{Name: target.Function, Binary: bin, SurvivesPanic: true}
	if cfg.Workload != "" && cfg.Workload != "tiny" {
		cleanup()
		return rt, nil, fmt.Errorf("-workload %s needs the demo's handler (cmd/bootstrap); give your function its own events with -events FILE", cfg.Workload)
	}
	if !cfg.given["target"] {
		cfg.Target = target.Default(cfg.Stderr)
		if !cfg.given["on-throttle"] {
			cfg.OnThrottle = bench.DefaultOnThrottle(cfg.Target)
		}
		cfg.Flags["target"], cfg.Flags["on-throttle"] = cfg.Target, cfg.OnThrottle
	}
	if err := cfg.useEvents(); err != nil {
		cleanup()
		return rt, nil, err
	}
	return rt, cleanup, nil
}

// useEvents sets the run's workload to the user's events (userEvents).
func (cfg *runConfig) useEvents() error {
	items, desc, err := userEvents(cfg.Events, cfg.Expect, cfg.Shuffle)
	if err != nil {
		return err
	}
	cfg.Workload, cfg.EventsDesc = load.EventsWorkload, desc
	cfg.UserEvents = load.Workload{Name: load.EventsWorkload, Items: items}
	return nil
}

// run runs sc on rts and writes its report: on stdout and in -out, the
// function's output summed up in it, and last the verdict.
func (cfg *runConfig) run(ctx context.Context, sc bench.Scenario, rts []target.Runtime, stdout io.Writer) error {
	stop := bench.Answers(&cfg.Settings, sc.Warmup+sc.Count)
	res, err := bench.Execute(ctx, cfg.Settings, []bench.Scenario{sc}, rts)
	rep := report.New("run", cfg, cfg.Settings, []bench.Scenario{sc}, rts, res)
	stop()
	if cfg.Output != nil {
		err = errors.Join(err, cfg.Output.Close())
		c := cfg.Output.Summary()
		for _, sr := range rep.Scenarios {
			for i := range sr.Runs {
				sr.Runs[i].Output = &c
			}
		}
	}
	if len(rep.Scenarios) != 1 {
		return err
	}
	rep.Notes = report.RunNotes(rep)
	report.PrintRun(stdout, rep)
	if werr := report.Write(rep, cfg.Out, "run", stdout); werr != nil {
		err = errors.Join(err, werr)
	}
	if err == nil && rep.Problems() > 0 {
		err = fmt.Errorf("%d run(s) had problems (see above)", rep.Problems())
	}
	// The last line: what the run proves and what it does not.
	fmt.Fprintln(stdout, report.RunVerdict(rep))
	return err
}
