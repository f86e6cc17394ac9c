package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress tells, on stderr, how far a long run has come: a bar when
// stderr is a terminal (or -progress on), otherwise one line per run.
type progress struct {
	bar     *progressbar.ProgressBar
	w       io.Writer
	total   int
	done    int
	current string
	t0      time.Time
	// silent: a bar of answers (answers) is drawn instead, and the
	// report says the rest.
	silent bool
}

func newProgress(cfg *config, total int) *progress {
	p := &progress{w: cfg.stderr, total: total, silent: cfg.answered != nil && total == 1}
	on := cfg.Progress == "on"
	if cfg.Progress == "auto" {
		if f, ok := cfg.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			on = true
		}
	}
	if on && total > 1 {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(cfg.stderr),
			progressbar.OptionSetDescription("load test"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	return p
}

// answers shows, on a terminal (or with -progress on), a bar of the
// answers of a single run's total invocations, from cfg.answered, until
// stop is called.
func answers(cfg *config, total int) (stop func()) {
	f, ok := cfg.stderr.(*os.File)
	on := cfg.Progress == "on" || cfg.Progress == "auto" && ok && term.IsTerminal(int(f.Fd()))
	if !on || total < 1 {
		return func() {}
	}
	cfg.answered = new(atomic.Int64)
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(cfg.stderr),
		progressbar.OptionSetDescription("answered"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				_ = bar.Clear()
				return
			case <-t.C:
				_ = bar.Set(int(min(cfg.answered.Load(), int64(total))))
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

func (p *progress) begin(desc string) {
	p.current, p.t0 = desc, time.Now()
	if p.bar != nil {
		p.bar.Describe(desc)
	}
}

// end reports the run r and returns it.
func (p *progress) end(r runResult) runResult {
	p.done++
	if p.silent {
		return r
	}
	line := fmt.Sprintf("[%d/%d] %s %s rep %d: %s", p.done, p.total, r.Scenario, r.Runtime, r.Rep, brief(r))
	if p.bar != nil {
		if len(r.Problems)+len(r.Warnings) > 0 {
			_ = p.bar.Clear()
			fmt.Fprintln(p.w, line)
		}
		_ = p.bar.Add(1)
		return r
	}
	fmt.Fprintln(p.w, line)
	return r
}

func (p *progress) close() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// brief is one line about a run.
func brief(r runResult) string {
	m := r.Metrics
	var parts []string
	if v, ok := m[mInvocations]; ok {
		parts = append(parts, fmt.Sprintf("%.0f invocations", v))
	}
	if v, ok := m[mThroughput]; ok {
		parts = append(parts, fmt.Sprintf("%.0f/s", v))
	}
	if v, ok := m[mP99]; ok {
		parts = append(parts, "p99 "+show.Latency(v))
	}
	if v, ok := m[mCPU]; ok {
		parts = append(parts, "CPU/inv "+show.Latency(v))
	}
	if v, ok := m[mPeakRSS]; ok {
		parts = append(parts, "peak RSS "+show.MiB(v))
	}
	if len(r.Problems) > 0 {
		parts = append(parts, "PROBLEM: "+strings.Join(r.Problems, "; "))
	}
	if len(r.Warnings) > 0 {
		parts = append(parts, "WARNING: "+strings.Join(r.Warnings, "; "))
	}
	return strings.Join(parts, ", ")
}
