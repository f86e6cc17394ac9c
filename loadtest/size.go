package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/lmigo/lmigo/loadtest/sizing"
	"github.com/lmigo/lmigo/loadtest/target"
)

// sizeConfig is the settings of `loadtest size`, from its flags.
type sizeConfig struct {
	target.Options
	Bootstrap, Events string // the function and its events
	Shuffle           bool
	Expect            string
	VCPUs             int
	JSON              string // the profile as JSON, to this file
	Step, MaxTime     time.Duration
	MaxN              int
	Check             bool
	ScaleAt           float64 // per cent
	Out               string  // the directory of size.md
}

// sizeMain is `loadtest size`: it measures the user's function as N grows
// and recommends N and memory.
func sizeMain(ctx context.Context, args []string) error {
	return sizeCommand(ctx, args, os.Stdout, os.Stderr)
}

// sizeCommand is sizeMain writing to stdout and stderr.
func sizeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseSize(args, stderr)
	if err != nil {
		return err
	}
	bin, cleanup, err := target.UserBootstrap(cfg.Bootstrap)
	if err != nil {
		return inputError("-bootstrap", cfg.Bootstrap, err)
	}
	defer cleanup()
	items, desc, err := userEvents(cfg.Events, cfg.Expect, cfg.Shuffle)
	if err != nil {
		return err
	}
	if cfg.Output, err = target.CreateOutput(cfg.Out, "size-function.log"); err != nil {
		return err
	}
	p, err := sizing.Run(ctx, sizing.Options{Target: cfg.Options, Binary: bin, Items: items, VCPUs: cfg.VCPUs, ScaleAt: cfg.ScaleAt / 100,
		Step: cfg.Step, MaxTime: cfg.MaxTime, MaxN: cfg.MaxN, Check: cfg.Check, Log: stderr, Bootstrap: cfg.Bootstrap, Events: desc})
	err = errors.Join(err, cfg.Output.Close())
	c := cfg.Output.Summary()
	p.Output = &c
	if p.Steps == nil {
		return err
	}
	sizing.Print(stdout, p)
	return errors.Join(err, writeSize(cfg, p, stdout))
}

// parseSize reads size's flags into its config, and checks them.
func parseSize(args []string, stderr io.Writer) (*sizeConfig, error) {
	cfg := &sizeConfig{Options: target.Options{Target: target.RIE, MemoryMB: 2048, Timeout: 30 * time.Second}, Out: defaultOut()}
	fs := flag.NewFlagSet("loadtest size", flag.ContinueOnError)
	fs.StringVar(&cfg.Bootstrap, "bootstrap", "", "your function: a bootstrap binary, or a zip as lmigo-pack writes it (required)")
	fs.StringVar(&cfg.Events, "events", "", "your JSON events (required): a file of one event, a JSON array of events or one event a line, or a directory of such .json files")
	fs.IntVar(&cfg.VCPUs, "vcpus", runtime.NumCPU(), "vCPUs of the execution environment to size for")
	fs.StringVar(&cfg.JSON, "json", "", "write the recommendation and the figures as JSON to this file")
	fs.StringVar(&cfg.Target, "target", cfg.Target, "rie (the AWS emulator in LMI mode; root) or fake (the fake Runtime API); rie unless the emulator cannot run here")
	fs.BoolVar(&cfg.Shuffle, "shuffle", false, "send the events shuffled (the same order every run) instead of in the file's order")
	fs.StringVar(&cfg.Expect, "expect", "", "a right answer's body matches this regular expression (default: a right answer is neither an error nor an HTTP door's response with a statusCode of 400 or more)")
	fs.DurationVar(&cfg.Step, "step", 3*time.Second, "the load at each N")
	fs.DurationVar(&cfg.MaxTime, "max-time", sizing.MaxProfile, "the whole profile at most (3m at most)")
	fs.IntVar(&cfg.MaxN, "max-n", sizing.MaxN, "the largest N to measure")
	fs.BoolVar(&cfg.Check, "check", true, "run the function at the recommended N to check it (when -vcpus is this machine's)")
	fs.Float64Var(&cfg.ScaleAt, "scale-at", 100*sizing.DefaultScaleAt, "the CPU % the capacity provider scales at (its AverageCPUUtilization; deploy/template.yaml sets 60)")
	fs.Var((*stringList)(&cfg.Env), "env", "KEY=VALUE for the function's environment (repeatable)")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory for size.md (\"\": none)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadtest size -bootstrap PATH -events FILE [-vcpus V] [-json OUT] [flags]\n\nMeasures your function as N grows (CPU and wall time per invocation, memory per invocation in flight, throughput and p99), finds the knee and recommends PerExecutionEnvironmentMaxConcurrency, ConcurrencyPerVCpu and ExecutionEnvironmentMemoryGiBPerVCpu for V vCPUs. At most 3 minutes; loopback only.")
		fs.PrintDefaults()
	}
	given, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Bootstrap == "" || cfg.Events == "":
		return nil, errors.New("size needs -bootstrap PATH and -events FILE")
	case cfg.Target != target.RIE && cfg.Target != target.Fake:
		return nil, fmt.Errorf("-target %s: size runs the function here, in rie or fake", cfg.Target)
	case cfg.VCPUs < 1 || cfg.Step <= 0 || cfg.MaxTime <= 0 || cfg.MaxN < 1:
		return nil, errors.New("-vcpus, -step, -max-time and -max-n must be positive")
	case cfg.ScaleAt <= 0 || cfg.ScaleAt > 100:
		return nil, errors.New("-scale-at is a CPU share in percent, above 0 and at most 100")
	}
	if err := checkEnv(cfg.Env); err != nil {
		return nil, err
	}
	if !given["target"] {
		cfg.Target = target.Default(stderr)
	}
	return cfg, nil
}

// writeSize writes the profile p as JSON (-json) and size.md (-out), and
// says where on stdout.
func writeSize(cfg *sizeConfig, p *sizing.Profile, stdout io.Writer) error {
	var werr error
	if cfg.JSON != "" {
		b, jerr := json.MarshalIndent(p, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(cfg.JSON, append(b, '\n'), 0o644)
		}
		if abs, aerr := filepath.Abs(cfg.JSON); jerr == nil && aerr == nil {
			fmt.Fprintf(stdout, "written: %s\n", abs)
		}
		werr = errors.Join(werr, jerr)
	}
	if cfg.Out != "" {
		if merr := os.MkdirAll(cfg.Out, 0o755); merr != nil {
			werr = errors.Join(werr, merr)
		} else {
			md := filepath.Join(cfg.Out, "size.md")
			if merr := os.WriteFile(md, sizing.Markdown(p), 0o644); merr != nil {
				werr = errors.Join(werr, merr)
			} else if abs, aerr := filepath.Abs(md); aerr == nil {
				fmt.Fprintf(stdout, "written: %s\n", abs)
			}
		}
	}
	return werr
}
