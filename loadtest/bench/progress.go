package bench

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

func newProgress(s Settings, total int) *progress {
	p := &progress{w: s.Stderr, total: total, silent: s.Answered != nil && total == 1}
	on := s.Progress == "on"
	if s.Progress == "auto" {
		if f, ok := s.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			on = true
		}
	}
	if on && total > 1 {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(s.Stderr),
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

// Answers shows, on a terminal (or with -progress on), a bar of a single
// run's answers out of total, counted in s.Answered, which it sets, until
// stop is called.
func Answers(s *Settings, total int) (stop func()) {
	f, ok := s.Stderr.(*os.File)
	on := s.Progress == "on" || s.Progress == "auto" && ok && term.IsTerminal(int(f.Fd()))
	if !on || total < 1 {
		return func() {}
	}
	s.Answered = new(atomic.Int64)
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(s.Stderr),
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
				_ = bar.Set(int(min(s.Answered.Load(), int64(total))))
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
func (p *progress) end(r RunResult) RunResult {
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
func brief(r RunResult) string {
	m := r.Metrics
	var parts []string
	if v, ok := m[Invocations]; ok {
		parts = append(parts, fmt.Sprintf("%.0f invocations", v))
	}
	if v, ok := m[Throughput]; ok {
		parts = append(parts, fmt.Sprintf("%.0f/s", v))
	}
	if v, ok := m[P99]; ok {
		parts = append(parts, "p99 "+show.Latency(v))
	}
	if v, ok := m[CPUPerInv]; ok {
		parts = append(parts, "CPU/inv "+show.Latency(v))
	}
	if v, ok := m[PeakRSS]; ok {
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
