package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
)

// config is every setting of a run or a comparison, from flags.
type config struct {
	bench.Settings

	// What to run.
	Set       string `json:"set,omitempty"` // compare
	Scenarios string `json:"scenarios,omitempty"`
	Workload  string `json:"workload,omitempty"`
	N         int    `json:"n,omitempty"`
	Runtime   string `json:"runtime,omitempty"`
	Runtimes  string `json:"runtimes,omitempty"` // compare
	Raw       string `json:"-"`
	Floor     string `json:"-"`
	Bootstrap string `json:"-"`
	// A user's events (-events), or the empty event for a user's
	// bootstrap without them: the workload "events" (load.EventsWorkload).
	Events  string `json:"events,omitempty"`
	Shuffle bool   `json:"shuffle,omitempty"`
	Expect  string `json:"expect,omitempty"`
	Lmigo   string `json:"-"`
	Ref     string `json:"-"`
	// Extra runtimes of a comparison, NAME=BINARY: variants run
	// interleaved with those of -runtimes (-target fake or rie).
	Extra []string `json:"extra,omitempty"`

	// Deployed functions.
	Function    string `json:"function,omitempty"`
	RefFunction string `json:"refFunction,omitempty"`

	// Output.
	Out string `json:"-"`

	given  map[string]bool // the flags given on the command line
	stdout io.Writer
}

// parse parses args into c with fs and records every flag's value.
func (c *config) parse(fs *flag.FlagSet, args []string) error {
	given, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	c.Flags, c.given, c.DurationSet = map[string]string{}, given, given["duration"]
	fs.VisitAll(func(f *flag.Flag) { c.Flags[f.Name] = f.Value.String() })
	if ev, ok := strings.CutPrefix(c.Workload, load.EventPrefix); ok {
		c.Event = ev // the events bootstraps answer it
	}
	return c.validate()
}

// register defines the flags common to run and compare on fs, with the
// defaults of cfg.
func (c *config) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Target, "target", c.Target, "where the runtime runs: fake (exec'd against the fake Runtime API), rie (AWS emulator in LMI mode; root), lambda (a deployed function)")
	fs.StringVar(&c.Model, "model", c.Model, "load model: closed (C callers, each sends when answered) or open (invocations at a constant rate by the clock, never waiting for answers; latency from the intended send time)")
	fs.IntVar(&c.Callers, "c", c.Callers, "closed model: concurrent callers (0: N)")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "open model: invocations per second")
	fs.IntVar(&c.Count, "count", c.Count, "invocations per run at most (0: the scenario's default)")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "send window per run at most")
	fs.IntVar(&c.Warmup, "warmup", c.Warmup, "invocations sent before the measured window (not for grow)")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "grow and stack:S: rounds of waves (grow: 64KiB..6MiB a round; stack:S: one)")
	fs.DurationVar(&c.GrowWindow, "grow-window", c.GrowWindow, "grow and stack:S: send window (their count is fixed: rounds x waves x N)")
	fs.DurationVar(&c.Idle, "idle", c.Idle, "grow and stack:S: idle period after the load before RSS is read again")
	fs.DurationVar(&c.Settle, "settle", c.Settle, "grow and stack:S: pause after the warm-up (one invocation per size; stack:S: one) before RSS is read the first time; longer than lmigo's idle free (2 s)")
	fs.DurationVar(&c.Pause, "throttle-pause", c.Pause, "wait before a throttled invocation is retried (-on-throttle retry, and grow; 0: fake target, until a /next is pending; others 1ms)")
	fs.StringVar(&c.OnThrottle, "on-throttle", c.OnThrottle, "what a caller does with a throttled invocation: retry (after -throttle-pause) or next (count it rejected, send the next one at once: the no-retry protocol); default next for -target rie, retry otherwise")
	fs.IntVar(&c.Reps, "reps", c.Reps, "repetitions of each run")
	fs.IntVar(&c.IdleOverlap, "idle-overlap", c.IdleOverlap, "grow and stack:S: runs of a scenario whose idle periods may overlap the next runs (1: none; each idle runtime keeps its peak memory, lower it on small hosts)")
	fs.StringVar(&c.Pin, "pin", c.Pin, "pin the runtime and the load test to one CPU: auto (N=1 only), always, never")
	fs.IntVar(&c.CPU, "cpu", c.CPU, "the CPU to pin to")
	fs.IntVar(&c.MemoryMB, "memory", c.MemoryMB, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE given to the runtime (MB)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "invocation timeout")
	fs.DurationVar(&c.SampleEvery, "sample", c.SampleEvery, "RSS sampling interval")
	fs.Var((*stringList)(&c.Env), "env", "KEY=VALUE for the runtime's environment (repeatable)")
	fs.StringVar(&c.Function, "function", c.Function, "lambda target: the function (name or ARN) to invoke; compare: lmigo's")
	fs.StringVar(&c.RefFunction, "ref-function", c.RefFunction, "lambda target, compare: the aws-lambda-go function")
	fs.StringVar(&c.Region, "region", c.Region, "lambda target: AWS region (default: from the AWS config or EC2)")
	fs.StringVar(&c.Endpoint, "endpoint", c.Endpoint, "lambda target: Lambda API endpoint URL (default: AWS)")
	fs.StringVar(&c.Qualifier, "qualifier", c.Qualifier, "lambda target: version or alias to invoke (default $LATEST)")
	fs.BoolVar(&c.SDK, "sdk", c.SDK, "rie target: invoke through aws-sdk-go-v2's Lambda Invoke instead of plain HTTP")
	fs.StringVar(&c.Out, "out", c.Out, "directory for the JSON, Markdown and PNG reports (\"\": none)")
	fs.StringVar(&c.Progress, "progress", c.Progress, "progress bar on stderr: auto (when a terminal), on, off")
}

// defaults of both commands; run and compare adjust some.
func defaultConfig() *config {
	return &config{Settings: bench.DefaultSettings(), Out: defaultOut(), stdout: os.Stdout}
}

func (c *config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Target {
	case target.Fake, target.RIE, target.Lambda:
	default:
		bad("-target %q: want fake, rie or lambda", c.Target)
	}
	switch c.Model {
	case load.ModelClosed:
	case load.ModelOpen:
		if c.Rate <= 0 {
			bad("-model open needs -rate > 0")
		}
	default:
		bad("-model %q: want closed or open", c.Model)
	}
	switch c.OnThrottle {
	case bench.ThrottleRetry, bench.ThrottleNext:
	case "":
		c.OnThrottle = bench.DefaultOnThrottle(c.Target)
	default:
		bad("-on-throttle %q: want retry or next", c.OnThrottle)
	}
	switch c.Pin {
	case "auto", "always", "never":
	default:
		bad("-pin %q: want auto, always or never", c.Pin)
	}
	switch c.Profile {
	case "auto":
		if measure.PerfAvailable() != nil {
			c.Profile = "off"
		}
	case "on":
		if err := measure.PerfAvailable(); err != nil {
			bad("-profile on: %v", err)
		}
	case "off":
	default:
		bad("-profile %q: want auto, on or off", c.Profile)
	}
	switch c.Progress {
	case "auto", "on", "off":
	default:
		bad("-progress %q: want auto, on or off", c.Progress)
	}
	if c.CPU < 0 || c.CPU >= runtime.NumCPU() {
		bad("-cpu %d: this machine has CPUs 0..%d", c.CPU, runtime.NumCPU()-1)
	}
	if c.Reps < 1 || c.Rounds < 1 || c.IdleOverlap < 1 || c.Duration <= 0 || c.GrowWindow <= 0 || c.Timeout <= 0 || c.SampleEvery <= 0 || c.Count < 0 || c.Warmup < 0 || c.Idle < 0 || c.Settle < 0 {
		bad("-reps, -rounds, -idle-overlap, -duration, -timeout and -sample must be positive; -count, -warmup, -idle and -settle not negative")
	}
	if err := checkEnv(c.Env); err != nil {
		errs = append(errs, err)
	}
	if c.Target == target.Lambda && c.Function == "" {
		bad("-target lambda needs -function")
	}
	return errors.Join(errs...)
}
