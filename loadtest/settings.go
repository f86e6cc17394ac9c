package main

import (
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
)

// The flags of the bench's settings, which run and compare share, and the
// prebuilt bootstraps of the load test's runtimes.

// registerBench defines the flags of s on fs, with s's values as their
// defaults.
func registerBench(fs *flag.FlagSet, s *bench.Settings) {
	fs.StringVar(&s.Target, "target", s.Target, "where the runtime runs: fake (exec'd against the fake Runtime API), rie (AWS emulator in LMI mode; root), lambda (a deployed function)")
	fs.StringVar(&s.Model, "model", s.Model, "load model: closed (C callers, each sends when answered) or open (invocations at a constant rate by the clock, never waiting for answers; latency from the intended send time)")
	fs.IntVar(&s.Callers, "c", s.Callers, "closed model: concurrent callers (0: N)")
	fs.Float64Var(&s.Rate, "rate", s.Rate, "open model: invocations per second")
	fs.IntVar(&s.Count, "count", s.Count, "invocations per run at most (0: the scenario's default)")
	fs.DurationVar(&s.Duration, "duration", s.Duration, "send window per run at most")
	fs.IntVar(&s.Warmup, "warmup", s.Warmup, "invocations sent before the measured window (not for grow)")
	fs.IntVar(&s.Rounds, "rounds", s.Rounds, "grow and stack:S: rounds of waves (grow: 64KiB..6MiB a round; stack:S: one)")
	fs.DurationVar(&s.GrowWindow, "grow-window", s.GrowWindow, "grow and stack:S: send window (their count is fixed: rounds x waves x N)")
	fs.DurationVar(&s.Idle, "idle", s.Idle, "grow and stack:S: idle period after the load before RSS is read again")
	fs.DurationVar(&s.Settle, "settle", s.Settle, "grow and stack:S: pause after the warm-up (one invocation per size; stack:S: one) before RSS is read the first time; longer than lmigo's idle free (2 s)")
	fs.DurationVar(&s.Pause, "throttle-pause", s.Pause, "wait before a throttled invocation is retried (-on-throttle retry, and grow; 0: fake target, until a /next is pending; others 1ms)")
	fs.StringVar(&s.OnThrottle, "on-throttle", s.OnThrottle, "what a caller does with a throttled invocation: retry (after -throttle-pause) or next (count it rejected, send the next one at once: the no-retry protocol); default next for -target rie, retry otherwise")
	fs.IntVar(&s.Reps, "reps", s.Reps, "repetitions of each run")
	fs.IntVar(&s.IdleOverlap, "idle-overlap", s.IdleOverlap, "grow and stack:S: runs of a scenario whose idle periods may overlap the next runs (1: none; each idle runtime keeps its peak memory, lower it on small hosts)")
	fs.StringVar(&s.Pin, "pin", s.Pin, "pin the runtime and the load test to one CPU: auto (N=1 only), always, never")
	fs.IntVar(&s.CPU, "cpu", s.CPU, "the CPU to pin to")
	fs.IntVar(&s.MemoryMB, "memory", s.MemoryMB, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE given to the runtime (MB)")
	fs.DurationVar(&s.Timeout, "timeout", s.Timeout, "invocation timeout")
	fs.DurationVar(&s.SampleEvery, "sample", s.SampleEvery, "RSS sampling interval")
	fs.Var((*stringList)(&s.Env), "env", "KEY=VALUE for the runtime's environment (repeatable)")
	fs.StringVar(&s.Region, "region", s.Region, "lambda target: AWS region (default: from the AWS config or EC2)")
	fs.StringVar(&s.Endpoint, "endpoint", s.Endpoint, "lambda target: Lambda API endpoint URL (default: AWS)")
	fs.StringVar(&s.Qualifier, "qualifier", s.Qualifier, "lambda target: version or alias to invoke (default $LATEST)")
	fs.BoolVar(&s.SDK, "sdk", s.SDK, "rie target: invoke through aws-sdk-go-v2's Lambda Invoke instead of plain HTTP")
	fs.StringVar(&s.Progress, "progress", s.Progress, "progress bar on stderr: auto (when a terminal), on, off")
}

// parseBench parses args with fs into s, records every flag's value for
// the report, and checks s. It returns the flags given.
func parseBench(fs *flag.FlagSet, args []string, s *bench.Settings) (given map[string]bool, err error) {
	if given, err = parseArgs(fs, args); err != nil {
		return nil, err
	}
	s.Flags, s.DurationSet = map[string]string{}, given["duration"]
	fs.VisitAll(func(f *flag.Flag) { s.Flags[f.Name] = f.Value.String() })
	return given, checkBench(s)
}

// checkBench reports every bad setting of s at once, and resolves those
// left to it: -on-throttle by the target, -profile auto by perf.
func checkBench(s *bench.Settings) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch s.Target {
	case target.Fake, target.RIE, target.Lambda:
	default:
		bad("-target %q: want fake, rie or lambda", s.Target)
	}
	switch s.Model {
	case load.ModelClosed:
	case load.ModelOpen:
		if s.Rate <= 0 {
			bad("-model open needs -rate > 0")
		}
	default:
		bad("-model %q: want closed or open", s.Model)
	}
	switch s.OnThrottle {
	case bench.ThrottleRetry, bench.ThrottleNext:
	case "":
		s.OnThrottle = bench.DefaultOnThrottle(s.Target)
	default:
		bad("-on-throttle %q: want retry or next", s.OnThrottle)
	}
	switch s.Pin {
	case "auto", "always", "never":
	default:
		bad("-pin %q: want auto, always or never", s.Pin)
	}
	switch s.Profile {
	case "auto":
		if measure.PerfAvailable() != nil {
			s.Profile = "off"
		}
	case "on":
		if err := measure.PerfAvailable(); err != nil {
			bad("-profile on: %v", err)
		}
	case "off":
	default:
		bad("-profile %q: want auto, on or off", s.Profile)
	}
	switch s.Progress {
	case "auto", "on", "off":
	default:
		bad("-progress %q: want auto, on or off", s.Progress)
	}
	if s.CPU < 0 || s.CPU >= runtime.NumCPU() {
		bad("-cpu %d: this machine has CPUs 0..%d", s.CPU, runtime.NumCPU()-1)
	}
	if s.Reps < 1 || s.Rounds < 1 || s.IdleOverlap < 1 || s.Duration <= 0 || s.GrowWindow <= 0 || s.Timeout <= 0 || s.SampleEvery <= 0 || s.Count < 0 || s.Warmup < 0 || s.Idle < 0 || s.Settle < 0 {
		bad("-reps, -rounds, -idle-overlap, -duration, -timeout and -sample must be positive; -count, -warmup, -idle and -settle not negative")
	}
	if err := checkEnv(s.Env); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// needFunction is the error of a deployed target without a function.
func needFunction(where, function string) error {
	if where == target.Lambda && function == "" {
		return errors.New("-target lambda needs -function")
	}
	return nil
}

// eventName is the event of the workload event:NAME, which the events
// bootstraps answer; "" for other workloads.
func eventName(workload string) string {
	if ev, ok := strings.CutPrefix(workload, load.EventPrefix); ok {
		return ev
	}
	return ""
}

// bootstraps are the prebuilt bootstrap binaries of the load test's
// runtimes (-lmigo, -raw, -ref, -floor); "" builds it.
type bootstraps struct{ Lmigo, Raw, Ref, Floor string }

// register defines the flags of b on fs.
func (b *bootstraps) register(fs *flag.FlagSet) {
	fs.StringVar(&b.Lmigo, "lmigo", "", "lmigo bootstrap binary (default: build ./cmd/bootstrap; ./loadtest/events/lmigo for event:NAME)")
	fs.StringVar(&b.Ref, "ref", "", "aws-lambda-go bootstrap binary (default: build ./loadtest/refbootstrap; ./loadtest/events/awslambdago for event:NAME)")
	fs.StringVar(&b.Raw, "raw", "", "lmigo-raw bootstrap binary (default: build ./loadtest/rawbootstrap)")
	fs.StringVar(&b.Floor, "floor", "", "floor bootstrap binary (default: build ./loadtest/floorbootstrap)")
}

// of is the binary given for the runtime named so, and its flag.
func (b bootstraps) of(runtime string) (bin, flag string) {
	switch runtime {
	case target.Lmigo:
		return b.Lmigo, "-lmigo"
	case target.LmigoRaw:
		return b.Raw, "-raw"
	case target.AWSLambdaGo:
		return b.Ref, "-ref"
	case target.Floor:
		return b.Floor, "-floor"
	}
	return "", ""
}
