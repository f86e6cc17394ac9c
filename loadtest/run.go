package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// runMain is `loadtest run` (and `make run`): one runtime, one scenario.
// By default the demo: lmigo's reference bootstrap under a few seconds of
// the mix-panic workload at N=8 from the fake Runtime API.
func runMain(ctx context.Context, args []string) error {
	cfg := defaultConfig()
	cfg.Reps, cfg.Count, cfg.Warmup, cfg.N, cfg.Runtime = 1, 4000, 100, 8, rtLmigo
	fs := flag.NewFlagSet("loadtest run", flag.ContinueOnError)
	cfg.register(fs)
	fs.StringVar(&cfg.Runtime, "runtime", cfg.Runtime, "the runtime: lmigo (builds ./cmd/bootstrap), lmigo-raw (./loadtest/rawbootstrap) or aws-lambda-go (./loadtest/refbootstrap); for event:NAME, ./loadtest/events/lmigo or ./loadtest/events/awslambdago")
	fs.StringVar(&cfg.Bootstrap, "bootstrap", "", "a prebuilt bootstrap binary of -runtime instead")
	fs.StringVar(&cfg.Workload, "workload", "", "tiny, size:S, mix, mix-panic, grow or event:NAME (default: mix-panic for lmigo, mix otherwise)")
	fs.IntVar(&cfg.N, "n", cfg.N, "AWS_LAMBDA_MAX_CONCURRENCY")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadtest run [flags]\n\nOne runtime under one load, then a report. Without flags: lmigo's reference bootstrap, mix-panic, N=8, a few seconds.")
		fs.PrintDefaults()
	}
	if err := cfg.parse(fs, args); err != nil {
		return err
	}
	if !slices.Contains([]string{rtLmigo, rtRaw, rtRef}, cfg.Runtime) {
		return fmt.Errorf("-runtime %q: want lmigo, lmigo-raw or aws-lambda-go", cfg.Runtime)
	}
	rt := runtimeSpec{Name: cfg.Runtime, Binary: cfg.Bootstrap, SurvivesPanic: cfg.Runtime != rtRef}
	if cfg.Workload == "" {
		cfg.Workload = "mix"
		if rt.SurvivesPanic {
			cfg.Workload = "mix-panic"
		}
	}
	sc, err := newScenario(cfg, cfg.Workload, max(cfg.N, 1), 0)
	if err != nil {
		return err
	}
	rts := []runtimeSpec{rt}
	if cfg.Target == targetLambda {
		rts[0].Binary, rts[0].Function = "", cfg.Function
	} else {
		cleanup, err := buildMissing(ctx, cfg, rts, "-runtime")
		if err != nil {
			return err
		}
		defer cleanup()
	}
	rep, err := execute(ctx, cfg, "run", []scenario{sc}, rts)
	if rep != nil && len(rep.Scenarios) == 1 {
		printRun(cfg.stdout, rep)
		if werr := writeReports(cfg, rep, "run"); werr != nil {
			err = errors.Join(err, werr)
		}
		if err == nil && rep.problems() > 0 {
			err = fmt.Errorf("%d run(s) had problems (see above)", rep.problems())
		}
	}
	return err
}

// printRun writes the report of a single runtime, one line per figure.
func printRun(w io.Writer, rep *report) {
	sr := rep.Scenarios[0]
	sc := sr.Scenario
	rt := rep.Runtimes[0].Name
	m := sr.Medians[rt]
	load := fmt.Sprintf("%d closed-loop callers", sc.Callers)
	switch sc.Model {
	case modelOpen:
		load = fmt.Sprintf("open loop at %.0f/s (at most %d in flight)", sc.Rate, sc.Outstanding)
	case "waves":
		load = fmt.Sprintf("waves of %d, %d rounds, then %s idle", sc.N, sc.Rounds, time.Duration(sc.Idle))
	}
	fmt.Fprintf(w, "\n%s: %s at N=%d, %s, target %s, at most %d invocations or %s\n",
		rt, sc.Workload, sc.N, load, rep.Config.Target, sc.Count, time.Duration(sc.Window))
	get := func(key string, f func(float64) string) string { return cell(m, key, f) }
	var lines [][]string
	add := func(k, v string) { lines = append(lines, []string{"  " + k, v}) }
	add("exec to N polls outstanding", get(mReady, fmtMS))
	for _, r := range sr.Runs {
		l := r.Load
		add("invocations answered", fmt.Sprintf("%d (%d ok, %d function errors as asked, %d wrong), %d measured after %d warm-up",
			l.answered(), l.OK, l.FuncErrors, l.Wrong, int64(m[mInvocations]), sc.Warmup))
		add("throttled (Runtime.Unavailable), "+rep.Config.OnThrottle, fmt.Sprintf("%d (%s per 1000, %s of attempts)", l.Throttles, get(mThrottles, fmtOne), get(mRejected, fmtPct)))
		if r.API != nil {
			add("max polls + in flight (limit N)", fmt.Sprintf("%d (violations: %d)", r.API.MaxOutstanding, r.API.Violations))
			add("invocations handed out / ended", fmt.Sprintf("%d / %d", r.API.Invocations, r.API.Ended()))
			add("answers cross-wired / without echo", fmt.Sprintf("%d / %d", r.API.CrossWired, r.API.NoEcho))
		}
		if r.CPUs != "" {
			add("runtime's CPUs", r.CPUs)
		}
	}
	add("throughput", get(mThroughput, fmtCount)+" invocations/s")
	add("latency p50 / p90 / p99 / p99.9 / max", strings.Join([]string{
		get(mP50, fmtLatency), get(mP90, fmtLatency), get(mP99, fmtLatency), get(mP999, fmtLatency), get(mMax, fmtLatency)}, " / "))
	add("runtime CPU per invocation", get(mCPU, fmtLatency))
	add("runtime peak RSS / RSS after", get(mPeakRSS, fmtMiB)+" / "+get(mRSSAfter, fmtMiB))
	add("GCs in the measured window", get(mGCs, fmtCount)+" ("+get(mGCPer1k, fmtOne)+" per 1000)")
	add("TCP connections: at init / per 1000 after", get(mConnsInit, fmtCount)+" / "+get(mConnsPer1k, fmtOne))
	writeAligned(w, lines, 2)
	printAccounting(w, rep)
}
