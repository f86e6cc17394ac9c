package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// compareMain is `loadtest compare`: lmigo and aws-lambda-go side by side.
func compareMain(ctx context.Context, args []string) error {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("loadtest compare", flag.ContinueOnError)
	cfg.register(fs)
	fs.StringVar(&cfg.Set, "set", bench.SetStandard, "the scenarios to run: "+bench.SetSaturation+" (closed model), "+bench.SetBelowSat+" (open model: tiny with its latency rows, I/O-bound handlers, grown stacks; with their targets) or "+bench.SetStandard+" (both); the standard set is "+strings.Join(bench.SetNames(bench.SetStandard), ", "))
	fs.StringVar(&cfg.Scenarios, "scenario", "", "comma-separated scenarios to run instead of -set: WORKLOAD-nN (closed model), WORKLOAD-nN-rR (open model at R/s), e.g. size-256KiB-n1, wait-20ms-n64-r1000")
	fs.StringVar(&cfg.Workload, "workload", "", "run one custom scenario of this workload (tiny, size:S, wait:D, mix, grow, stack:S, event:NAME) instead of the standard set")
	fs.IntVar(&cfg.N, "n", 1, "with -workload: AWS_LAMBDA_MAX_CONCURRENCY")
	fs.StringVar(&cfg.Lmigo, "lmigo", "", "lmigo bootstrap binary (default: build ./cmd/bootstrap; ./loadtest/events/lmigo for event:NAME)")
	fs.StringVar(&cfg.Ref, "ref", "", "aws-lambda-go bootstrap binary (default: build ./loadtest/refbootstrap; ./loadtest/events/awslambdago for event:NAME)")
	fs.Var((*stringList)(&cfg.Extra), "extra", "NAME=BINARY: one more runtime (a variant of lmigo, say) run interleaved with those of -runtimes, figures and rejection verdict of its own (repeatable)")
	fs.StringVar(&cfg.Raw, "raw", "", "lmigo-raw bootstrap binary (default: build ./loadtest/rawbootstrap)")
	fs.StringVar(&cfg.Floor, "floor", "", "floor bootstrap binary (default: build ./loadtest/floorbootstrap)")
	cfg.Profile = "auto"
	fs.StringVar(&cfg.Profile, "profile", cfg.Profile, "the share of runtime.startm and runtime.stopm in the CPU of lmigo's runtimes and the floor, in the open model: perf record in one more run each after the measured ones: auto (when perf is installed), on, off")
	fs.StringVar(&cfg.Runtimes, "runtimes", defaultRuntimes, "comma-separated runtimes, run interleaved in this order: "+target.Lmigo+" (typed handler), "+target.LmigoRaw+" (raw handler), "+target.AWSLambdaGo+", "+target.Floor+" (not a runtime: the least work, tiny, size:S and wait:D only), "+target.LmigoHandler+" and "+target.AWSLambdaGoHandler+" (a lambda.Handler of the user's own under each); ratios are against "+target.AWSLambdaGo+", and each runtime's against "+target.Floor+" (vs floor)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadtest compare [flags]\n\nRuns each scenario for lmigo, aws-lambda-go and the floor (and lmigo-raw with -runtimes), interleaved, -reps times, and reports medians, ratios, each runtime against the floor, whether the memory targets and the floor targets are met and, against the emulator, whether the rejection target is.")
		fs.PrintDefaults()
	}
	if err := cfg.parse(fs, args); err != nil {
		return err
	}
	scs, err := compareScenarios(cfg)
	if err != nil {
		return err
	}
	rts, cleanup, err := compareRuntimes(ctx, cfg)
	if err != nil {
		return err
	}
	if rts, err = extraRuntimes(cfg, rts); err != nil {
		cleanup()
		return err
	}
	defer cleanup()
	res, err := bench.Execute(ctx, cfg.Settings, scs, rts)
	rep := newReport("compare", cfg, scs, rts, res)
	printTable(cfg.stdout, rep)
	if werr := writeReports(cfg, rep, "compare"); werr != nil {
		err = errors.Join(err, werr)
	}
	if err == nil && rep.problems() > 0 {
		err = fmt.Errorf("%d runs had problems (see the report)", rep.problems())
	}
	return err
}

// defaultRuntimes are compared unless -runtimes says otherwise: the floor
// too, so that every report shows each runtime's distance to it.
const defaultRuntimes = target.Lmigo + "," + target.AWSLambdaGo + "," + target.Floor

func compareScenarios(cfg *config) ([]bench.Scenario, error) {
	if cfg.Workload != "" {
		sc, err := bench.NewScenario(cfg.Settings, bench.Row{Workload: cfg.Workload, N: max(cfg.N, 1)})
		return []bench.Scenario{sc}, err
	}
	rows, err := bench.SetRows(cfg.Set)
	if err != nil {
		return nil, err
	}
	if cfg.Scenarios != "" {
		rows = nil
		for _, name := range strings.Split(cfg.Scenarios, ",") {
			r, err := bench.ParseScenarioName(strings.TrimSpace(name))
			if err != nil {
				return nil, err
			}
			rows = append(rows, r)
		}
	}
	var scs []bench.Scenario
	for _, r := range rows {
		sc, err := bench.NewScenario(cfg.Settings, r)
		if err != nil {
			return nil, fmt.Errorf("scenario %q: %w", r.Name(), err)
		}
		scs = append(scs, sc)
	}
	return scs, nil
}

// compareRuntimes builds (or takes) the bootstraps of -runtimes, or names
// the functions. cleanup removes what was built.
func compareRuntimes(ctx context.Context, cfg *config) ([]target.Runtime, func(), error) {
	var rts []target.Runtime
	for _, name := range strings.Split(cfg.Runtimes, ",") {
		name = strings.TrimSpace(name)
		var rt target.Runtime
		switch name {
		case target.Lmigo:
			rt = target.Runtime{Name: name, Binary: cfg.Lmigo, SurvivesPanic: true}
		case target.LmigoRaw:
			rt = target.Runtime{Name: name, Binary: cfg.Raw, SurvivesPanic: true}
		case target.AWSLambdaGo:
			rt = target.Runtime{Name: name, Binary: cfg.Ref}
		case target.LmigoHandler:
			rt = target.Runtime{Name: name, SurvivesPanic: true}
		case target.AWSLambdaGoHandler:
			rt = target.Runtime{Name: name}
		case target.Floor:
			if cfg.Target == target.Lambda && cfg.Runtimes == defaultRuntimes {
				continue // no function of it is deployed
			}
			rt = target.Runtime{Name: name, Binary: cfg.Floor}
		default:
			return nil, nil, fmt.Errorf("-runtimes: unknown runtime %q (want %s, %s, %s, %s, %s, %s)", name, target.Lmigo, target.LmigoRaw, target.AWSLambdaGo, target.Floor, target.LmigoHandler, target.AWSLambdaGoHandler)
		}
		if slices.ContainsFunc(rts, func(r target.Runtime) bool { return r.Name == name }) {
			return nil, nil, fmt.Errorf("-runtimes: %s given twice", name)
		}
		rts = append(rts, rt)
	}
	if cfg.Target == target.Lambda {
		if cfg.RefFunction == "" || len(rts) != 2 || rts[0].Name != target.Lmigo || rts[1].Name != target.AWSLambdaGo {
			return nil, nil, errors.New("compare -target lambda needs -function (lmigo) and -ref-function (aws-lambda-go), and runs those two only")
		}
		rts[0].Binary, rts[0].Function = "", cfg.Function
		rts[1].Binary, rts[1].Function = "", cfg.RefFunction
		return rts, func() {}, nil
	}
	cleanup, err := target.BuildMissing(ctx, rts, cfg.Workload, "-runtimes:", cfg.Stderr)
	if err != nil {
		return nil, nil, err
	}
	return rts, cleanup, nil
}

// extraRuntimes appends cfg.Extra (NAME=BINARY) to rts. Each survives a
// panic if its name starts with lmigo.
func extraRuntimes(cfg *config, rts []target.Runtime) ([]target.Runtime, error) {
	if len(cfg.Extra) > 0 && cfg.Target == target.Lambda {
		return nil, errors.New("-extra: fake and rie targets only")
	}
	for _, kv := range cfg.Extra {
		name, bin, ok := strings.Cut(kv, "=")
		if !ok || name == "" || bin == "" {
			return nil, fmt.Errorf("-extra %q: want NAME=BINARY", kv)
		}
		for _, rt := range rts {
			if rt.Name == name {
				return nil, fmt.Errorf("-extra %q: runtime %s exists already", kv, name)
			}
		}
		rts = append(rts, target.Runtime{Name: name, Binary: bin, SurvivesPanic: strings.HasPrefix(name, target.Lmigo)})
	}
	return rts, nil
}

// report is everything a run or a comparison produced; it is written as
// JSON as it is.
type report struct {
	Kind      string           `json:"kind"` // run or compare
	Started   time.Time        `json:"started"`
	Elapsed   show.Duration    `json:"elapsed"`
	Host      bench.Host       `json:"host"`
	Config    *config          `json:"config"`
	Runtimes  []target.Runtime `json:"runtimes"`
	Scenarios []scenarioReport `json:"scenarios"`
	// FloorTargets are lmigo's targets against the floor, across scenarios.
	FloorTargets []floorCheck `json:"floorTargets,omitempty"`
	Notes        []string     `json:"notes"`
}

// scenarioReport is one scenario: every run, the median of each metric per
// runtime over the repetitions, and the ratios of the medians: Ratios is
// the first runtime's against aws-lambda-go (lmigo / aws-lambda-go),
// MoreRatios those of the others (lmigo-raw), by runtime.
type scenarioReport struct {
	Scenario   bench.Scenario                `json:"scenario"`
	Runs       []bench.RunResult             `json:"runs"`
	Medians    map[string]map[string]float64 `json:"medians"`
	Ratios     map[string]float64            `json:"ratios,omitempty"`
	MoreRatios map[string]map[string]float64 `json:"moreRatios,omitempty"`
	// FloorRatios are each runtime's medians against the floor's, by
	// runtime, when the floor ran and is not itself the reference.
	FloorRatios map[string]map[string]float64 `json:"floorRatios,omitempty"`
	// Targets are the memory targets checked on the medians.
	Targets []targetCheck `json:"targets,omitempty"`
}

func (r *report) problems() int {
	n := 0
	for _, s := range r.Scenarios {
		for _, run := range s.Runs {
			if len(run.Problems) > 0 {
				n++
			}
		}
	}
	return n
}

// newReport is the report of an execution of scs for rts: its runs, their
// medians and ratios, the targets checked, and the notes that say how
// the figures were taken.
func newReport(kind string, cfg *config, scs []bench.Scenario, rts []target.Runtime, res bench.Result) *report {
	rep := &report{Kind: kind, Started: res.Started, Elapsed: show.Duration(res.Elapsed), Host: res.Host, Config: cfg, Runtimes: rts}
	for _, runs := range res.Scenarios {
		sr := scenarioReport{Scenario: runs.Scenario, Runs: runs.Runs}
		summarize(&sr, rts)
		sr.Targets = checkTargets(cfg, sr)
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	rep.FloorTargets = floorTargets(rep)
	rep.Notes = notes(cfg, scs, rts)
	return rep
}

// summarize computes the medians per runtime and the ratios.
func summarize(sr *scenarioReport, rts []target.Runtime) {
	sr.Medians = map[string]map[string]float64{}
	for _, rt := range rts {
		vals := map[string][]float64{}
		for _, run := range sr.Runs {
			if run.Runtime != rt.Name || len(run.Problems) > 0 {
				continue
			}
			for k, v := range run.Metrics {
				if bench.ProfileMetric(k) == run.Profiled {
					vals[k] = append(vals[k], v)
				}
			}
		}
		med := map[string]float64{}
		for k, vs := range vals {
			med[k] = median(vs)
		}
		sr.Medians[rt.Name] = med
	}
	// Ratios of every other runtime against the reference (the first
	// runtime against the second when aws-lambda-go is not there).
	ref := slices.IndexFunc(rts, func(r target.Runtime) bool { return r.Name == target.AWSLambdaGo })
	if ref < 0 && len(rts) == 2 {
		ref = 1
	}
	floor := slices.IndexFunc(rts, func(r target.Runtime) bool { return r.Name == target.Floor })
	if floor >= 0 && floor != ref && len(sr.Medians[target.Floor]) > 0 {
		for i, rt := range rts {
			if i == floor || len(sr.Medians[rt.Name]) == 0 {
				continue
			}
			if sr.FloorRatios == nil {
				sr.FloorRatios = map[string]map[string]float64{}
			}
			sr.FloorRatios[rt.Name] = ratios(sr.Medians[rt.Name], sr.Medians[target.Floor])
		}
	}
	if ref < 0 {
		return
	}
	b := sr.Medians[rts[ref].Name]
	for i, rt := range rts {
		if i == ref || !rt.Serves(sr.Scenario.Work) {
			continue
		}
		rs := ratios(sr.Medians[rt.Name], b)
		if sr.Ratios == nil {
			sr.Ratios = rs // the first runtime's, as with two
			continue
		}
		if sr.MoreRatios == nil {
			sr.MoreRatios = map[string]map[string]float64{}
		}
		sr.MoreRatios[rt.Name] = rs
	}
}

// ratios are the metrics of a over those of b, where both have them.
func ratios(a, b map[string]float64) map[string]float64 {
	rs := map[string]float64{}
	for k, va := range a {
		if k == bench.RSSGrowth {
			continue // a difference, often near 0 or below: no ratio
		}
		if vb, ok := b[k]; ok {
			if r, ok := ratio(va, vb); ok {
				rs[k] = r
			}
		}
	}
	return rs
}

// median of vs (the mean of the middle two for an even count); vs is
// reordered. 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	m := len(vs) / 2
	if len(vs)%2 == 1 {
		return vs[m]
	}
	return (vs[m-1] + vs[m]) / 2
}

// ratio is a/b; 1 when both are 0; not defined when only b is.
func ratio(a, b float64) (float64, bool) {
	switch {
	case b != 0:
		return a / b, true
	case a == 0:
		return 1, true
	}
	return 0, false
}

// notes say how the figures were taken, for every report.
func notes(cfg *config, scs []bench.Scenario, rts []target.Runtime) []string {
	var ns []string
	for _, rt := range rts {
		var skipped []string
		for _, sc := range scs {
			if !rt.Serves(sc.Work) {
				skipped = append(skipped, sc.Name)
			}
		}
		if len(skipped) > 0 {
			ns = append(ns, fmt.Sprintf("%s serves tiny, size:S and wait:D only: not run for %s.", rt.Name, strings.Join(skipped, ", ")))
		}
	}
	var pinned []string
	for _, sc := range scs {
		if sc.PinCPU >= 0 {
			pinned = append(pinned, sc.Name)
		}
	}
	if len(pinned) > 0 {
		ns = append(ns, fmt.Sprintf("Pinned to CPU %d, the runtime (taskset -c %d) and the load test (all threads, GOMAXPROCS=1) alike: %s. Unpinned N=1 figures are bimodal on small machines (cross-CPU wake-ups).",
			cfg.CPU, cfg.CPU, strings.Join(pinned, ", ")))
	}
	for _, sc := range scs {
		if sc.Workload == "grow" {
			ns = append(ns, fmt.Sprintf("grow: first one invocation of each size (the warm-up: the demo's body cache, about 13 MiB, fills in every runtime), then %s idle (-settle), then RSS before is read; then waves of N invocations held at once (the demo's gather), one wave per size 64KiB, 256KiB, 1MiB, 2MiB, 4MiB, 6MiB, %d round(s); RSS after is read %s after the load; after-before is per run, then the median. Up to %d runs idle at once while the next ones run (-idle-overlap).",
				time.Duration(sc.Settle), sc.Rounds, time.Duration(sc.Idle), cfg.IdleOverlap))
			break
		}
	}
	for _, sc := range scs {
		if s, ok := strings.CutPrefix(sc.Workload, "stack:"); ok {
			ns = append(ns, fmt.Sprintf("stack:%s: one invocation (the warm-up), %s idle (-settle), then RSS before is read; then waves of N invocations, each growing its goroutine's stack to %s and all held at once (the demo's gather), %d round(s); RSS after is read %s after the load; after-before is per run, then the median.",
				s, time.Duration(sc.Settle), s, sc.Rounds, time.Duration(sc.Idle)))
			break
		}
	}
	ns = append(ns, belowSatNotes(cfg, scs, rts)...)
	switch cfg.Target {
	case target.Fake:
		ns = append(ns, "Target: each runtime exec'd against the fake LMI Runtime API, which runs inside the load test: its CPU is not the runtime's. CPU per invocation is the runtime's user+sys time (/proc/PID/stat) over the measured window divided by the invocations answered in it; drv CPU is the load test's own (the fake API and the callers), per invocation the same way: on a machine of few CPUs both bound inv/s.")
	case target.RIE:
		ns = append(ns, "Target: the AWS Runtime Interface Emulator in LMI mode; CPU and memory are the runtime's process (uid 993 in the emulator's PID namespace), the emulator excluded.")
	case target.Lambda:
		ns = append(ns, "Target: deployed functions through the Lambda Invoke API; only what a caller sees is measured (latency includes the network and Lambda's front end).")
	}
	ns = append(ns,
		fmt.Sprintf("Each value is the median of %d repetitions; runs of the runtimes interleaved (A B A B ..., or A B C A B C ...), each in a new process. Ratio is lmigo / aws-lambda-go (and lmigo-raw / aws-lambda-go): below 1 is less (faster, smaller) for lmigo, except inv/s where above 1 is better. \"X vs floor\" is X / floor, the least work that answers the same contract (loadtest/floorbootstrap: one connection per slot, HTTP/1.1 by hand, cached answers): 1 is no cost above it.", cfg.Reps),
		"Latency: closed model, the target's own measure (fake API: from hand-out on /next until the response is read in full); open model, from the intended send time. Percentiles from an HDR histogram (3 significant digits).",
		"Peak RSS is VmHWM; RSS before is VmRSS before the first wave (grow, stack:S); RSS after is VmRSS after the idle period (grow, stack:S) or at the end of the load; GC/1k counts gctrace lines (GODEBUG=gctrace=1) per 1000 invocations; conns/1k is TCP connections the runtime opened per 1000 invocations (fake API); ready is exec to N polls outstanding (rie: emulator start to init done), ready CPU the runtime's CPU time by then (fake); thr/1k is throttled attempts (Runtime.Unavailable) per 1000 invocations, rej % per 100 attempts: "+throttleHandling(cfg)+".",
	)
	return ns
}

// throttleHandling says what a caller did with a throttled invocation
// (-on-throttle, -throttle-pause; retryWait).
func throttleHandling(cfg *config) string {
	switch {
	case cfg.OnThrottle == bench.ThrottleNext:
		return "a throttled invocation is not retried: it counts as rejected and its caller sends the next one at once (-on-throttle next; grow retries it, as its wave waits for it)"
	case cfg.Pause > 0:
		return fmt.Sprintf("a throttled invocation is retried after %s (-throttle-pause)", cfg.Pause)
	case cfg.Target == target.Fake:
		return "a throttled invocation is retried as soon as the fake API has a /next pending again"
	}
	return "a throttled invocation is retried after 1 ms"
}
