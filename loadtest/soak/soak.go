package soak

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// Config is one soak run.
type Config struct {
	N         int           // AWS_LAMBDA_MAX_CONCURRENCY, and closed-loop callers
	Duration  time.Duration // how long the load runs
	Bootstrap string        // the binary; "" builds ./cmd/bootstrap
	// FormsBootstrap is the binary of the handler forms phase; "" builds
	// ./loadtest/soakbootstrap.
	FormsBootstrap string
	// NoForms leaves the handler forms phase out: the first phase gets
	// all of Duration.
	NoForms bool
	Sample  time.Duration // memory sampling period (also LMIGO_METRICS_INTERVAL)
	Log     io.Writer     // progress lines; nil for none
}

// Sample is one reading of the bootstrap's memory.
type Sample struct {
	At        time.Duration
	RSS       int64 // VmRSS
	HeapInUse int64 // from the EMF document, 0 when not read at this point
}

// Report is what a soak measured.
type Report struct {
	Duration     time.Duration
	Invocations  int64
	PerSecond    float64
	ByKind       [nKinds]int64
	Wrong        int64    // answers that did not match their request
	WrongSamples []string // the first few of them
	API          rapitest.Stats
	EMF          struct{ Invocations, Errors, Panics int64 }
	RSS          []Sample
	Heap         []Sample // HeapInUse at the end of each metrics interval
	Live         []Sample // live heap after each GC (gctrace), in HeapInUse
	ExitStatus   int
	ExitAfter    time.Duration // from SIGTERM
	Problems     []string
	Notes        []string      // what could not be judged, and why
	Forms        []*formReport // the handler forms phase
}

// OK reports whether the soak found nothing wrong.
func (r *Report) OK() bool {
	for _, f := range r.Forms {
		if len(f.Problems) > 0 {
			return false
		}
	}
	return len(r.Problems) == 0
}

// ProblemCount counts the problems of both phases.
func (r *Report) ProblemCount() int {
	n := len(r.Problems)
	for _, f := range r.Forms {
		n += len(f.Problems)
	}
	return n
}

// Run runs one soak. The error is for a soak that could not run; what it
// found wrong is in the report's Problems.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.N < 1 || cfg.Duration <= 0 || cfg.Sample < time.Second {
		return nil, fmt.Errorf("soak: need n >= 1, duration > 0, sample >= 1s")
	}
	var logMu sync.Mutex // the forms phase logs from a goroutine per form
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			logMu.Lock()
			fmt.Fprintf(cfg.Log, "soak: "+format+"\n", a...)
			logMu.Unlock()
		}
	}
	bin, formsBin, cleanup, err := bootstraps(ctx, cfg, logf)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	mixFor, formsFor := cfg.Duration/2, cfg.Duration-cfg.Duration/2
	if cfg.NoForms {
		mixFor = cfg.Duration
	}
	rep, err := mixPhase(ctx, cfg, bin, mixFor, logf)
	if err != nil {
		return nil, err
	}
	if !cfg.NoForms && ctx.Err() == nil {
		logf("handler forms %s, N=%d each, %v of load under faults, then SIGTERM", strings.Join(soakFormNames, ", "), cfg.N, formsFor)
		rep.Forms = soakFormsPhase(ctx, cfg, formsBin, formsFor, logf)
	}
	return rep, ctx.Err()
}

// bootstraps are the binaries of both phases: cfg's, or built into a
// temporary directory that cleanup removes.
func bootstraps(ctx context.Context, cfg Config, logf func(string, ...any)) (bin, formsBin string, cleanup func(), err error) {
	bin, formsBin, cleanup = cfg.Bootstrap, cfg.FormsBootstrap, func() {}
	if bin != "" && (formsBin != "" || cfg.NoForms) {
		return bin, formsBin, cleanup, nil
	}
	dir, err := os.MkdirTemp("", "lmigo-soak-")
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	var pkgs, outs []string
	if bin == "" {
		bin = filepath.Join(dir, "bootstrap")
		pkgs, outs = append(pkgs, target.PkgLmigo), append(outs, bin)
	}
	if formsBin == "" && !cfg.NoForms {
		formsBin = filepath.Join(dir, "soakbootstrap")
		pkgs, outs = append(pkgs, pkgSoakForms), append(outs, formsBin)
	}
	logf("building %s", strings.Join(pkgs, ", "))
	if err := target.Build(ctx, target.HostArch(), pkgs, outs); err != nil {
		cleanup()
		return "", "", nil, err
	}
	return bin, formsBin, cleanup, nil
}
