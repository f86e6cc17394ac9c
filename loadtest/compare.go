package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/report"
	"github.com/lmigo/lmigo/loadtest/target"
)

// compareConfig is the settings of `loadtest compare`, from its flags.
type compareConfig struct {
	bench.Settings
	Set       string `json:"set,omitempty"`
	Scenarios string `json:"scenarios,omitempty"`
	Workload  string `json:"workload,omitempty"`
	N         int    `json:"n,omitempty"`
	Runtimes  string `json:"runtimes,omitempty"`
	// Bootstraps are the runtimes' prebuilt bootstraps; Extra more
	// runtimes, NAME=BINARY, variants run interleaved with those of
	// -runtimes (-target fake or rie).
	Bootstraps bootstraps `json:"-"`
	Extra      []string   `json:"extra,omitempty"`
	// The deployed functions of -target lambda.
	Function    string `json:"function,omitempty"`
	RefFunction string `json:"refFunction,omitempty"`
	Out         string `json:"-"`
}

// compareMain is `loadtest compare`: lmigo and aws-lambda-go side by side.
func compareMain(ctx context.Context, args []string) error {
	cfg, err := parseCompare(args)
	if err != nil {
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
	rep := report.New("compare", cfg, cfg.Settings, scs, rts, res)
	report.PrintTable(os.Stdout, rep)
	if werr := report.Write(rep, cfg.Out, "compare", os.Stdout); werr != nil {
		err = errors.Join(err, werr)
	}
	if err == nil && rep.Problems() > 0 {
		err = fmt.Errorf("%d runs had problems (see the report)", rep.Problems())
	}
	return err
}

// parseCompare reads compare's flags into its config, and checks them.
func parseCompare(args []string) (*compareConfig, error) {
	cfg := &compareConfig{Settings: bench.DefaultSettings(), Out: defaultOut()}
	cfg.Profile = "auto"
	fs := flag.NewFlagSet("loadtest compare", flag.ContinueOnError)
	registerBench(fs, &cfg.Settings)
	cfg.Bootstraps.register(fs)
	fs.StringVar(&cfg.Set, "set", bench.SetStandard, "the scenarios to run: "+bench.SetSaturation+" (closed model), "+bench.SetBelowSat+" (open model: tiny with its latency rows, I/O-bound handlers, grown stacks; with their targets) or "+bench.SetStandard+" (both); the standard set is "+strings.Join(bench.SetNames(bench.SetStandard), ", "))
	fs.StringVar(&cfg.Scenarios, "scenario", "", "comma-separated scenarios to run instead of -set: WORKLOAD-nN (closed model), WORKLOAD-nN-rR (open model at R/s), e.g. size-256KiB-n1, wait-20ms-n64-r1000")
	fs.StringVar(&cfg.Workload, "workload", "", "run one custom scenario of this workload (tiny, size:S, wait:D, mix, grow, stack:S, event:NAME) instead of the standard set")
	fs.IntVar(&cfg.N, "n", 1, "with -workload: AWS_LAMBDA_MAX_CONCURRENCY")
	fs.Var((*stringList)(&cfg.Extra), "extra", "NAME=BINARY: one more runtime (a variant of lmigo, say) run interleaved with those of -runtimes, figures and rejection verdict of its own (repeatable)")
	fs.StringVar(&cfg.Profile, "profile", cfg.Profile, "the share of runtime.startm and runtime.stopm in the CPU of lmigo's runtimes and the floor, in the open model: perf record in one more run each after the measured ones: auto (when perf is installed), on, off")
	fs.StringVar(&cfg.Runtimes, "runtimes", defaultRuntimes, "comma-separated runtimes, run interleaved in this order: "+target.Lmigo+" (typed handler), "+target.LmigoRaw+" (raw handler), "+target.AWSLambdaGo+", "+target.Floor+" (not a runtime: the least work, tiny, size:S and wait:D only), "+target.LmigoHandler+" and "+target.AWSLambdaGoHandler+" (a lambda.Handler of the user's own under each); ratios are against "+target.AWSLambdaGo+", and each runtime's against "+target.Floor+" (vs floor)")
	fs.StringVar(&cfg.Function, "function", "", "lambda target: lmigo's function (name or ARN) to invoke")
	fs.StringVar(&cfg.RefFunction, "ref-function", "", "lambda target: the aws-lambda-go function")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory for the JSON, Markdown and PNG reports (\"\": none)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadtest compare [flags]\n\nRuns each scenario for lmigo, aws-lambda-go and the floor (and lmigo-raw with -runtimes), interleaved, -reps times, and reports medians, ratios, each runtime against the floor, whether the memory targets and the floor targets are met and, against the emulator, whether the rejection target is.")
		fs.PrintDefaults()
	}
	_, err := parseBench(fs, args, &cfg.Settings)
	if err = errors.Join(err, needFunction(cfg.Target, cfg.Function)); err != nil {
		return nil, err
	}
	cfg.Event = eventName(cfg.Workload)
	return cfg, nil
}

// defaultRuntimes are compared unless -runtimes says otherwise: the floor
// too, so that every report shows each runtime's distance to it.
const defaultRuntimes = target.Lmigo + "," + target.AWSLambdaGo + "," + target.Floor

// compareScenarios are the scenarios of -workload, -scenario or -set.
func compareScenarios(cfg *compareConfig) ([]bench.Scenario, error) {
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
func compareRuntimes(ctx context.Context, cfg *compareConfig) ([]target.Runtime, func(), error) {
	var rts []target.Runtime
	for _, name := range strings.Split(cfg.Runtimes, ",") {
		name = strings.TrimSpace(name)
		var rt target.Runtime
		switch name {
		case target.Lmigo:
			rt = target.Runtime{Name: name, Binary: cfg.Bootstraps.Lmigo, SurvivesPanic: true}
		case target.LmigoRaw:
			rt = target.Runtime{Name: name, Binary: cfg.Bootstraps.Raw, SurvivesPanic: true}
		case target.AWSLambdaGo:
			rt = target.Runtime{Name: name, Binary: cfg.Bootstraps.Ref}
		case target.LmigoHandler:
			rt = target.Runtime{Name: name, SurvivesPanic: true}
		case target.AWSLambdaGoHandler:
			rt = target.Runtime{Name: name}
		case target.Floor:
			if cfg.Target == target.Lambda && cfg.Runtimes == defaultRuntimes {
				continue // no function of it is deployed
			}
			rt = target.Runtime{Name: name, Binary: cfg.Bootstraps.Floor}
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
func extraRuntimes(cfg *compareConfig, rts []target.Runtime) ([]target.Runtime, error) {
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
