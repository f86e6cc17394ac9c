package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/lmigo/lmigo/loadtest/soak"
)

// soakMain is `loadtest soak` (make soak).
func soakMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	cfg := soak.Config{Log: os.Stderr}
	fs.IntVar(&cfg.N, "n", 64, "AWS_LAMBDA_MAX_CONCURRENCY, and as many closed-loop callers")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Minute, "how long the load runs")
	fs.StringVar(&cfg.Bootstrap, "lmigo", "", "lmigo bootstrap binary to soak (default: build ./cmd/bootstrap)")
	fs.DurationVar(&cfg.Sample, "sample", time.Second, "memory sampling period (1s or more)")
	fs.StringVar(&cfg.FormsBootstrap, "forms-bootstrap", "", "bootstrap binary of the handler forms phase (default: build ./loadtest/soakbootstrap)")
	fs.BoolVar(&cfg.NoForms, "no-forms", false, "leave out the handler forms phase")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rep, err := soak.Run(ctx, cfg)
	if err != nil {
		return err
	}
	soak.Print(os.Stdout, rep)
	if !rep.OK() {
		return fmt.Errorf("soak failed: %d problems", rep.ProblemCount())
	}
	return nil
}
