package load

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lmigo/lmigo/loadtest/show"
)

// Stats is what a load observed. Answered = OK + FuncErrors + Wrong.
type Stats struct {
	Elapsed    time.Duration
	OK         int64 // right answer
	FuncErrors int64 // function error, as asked
	Wrong      int64 // an answer that failed its check
	Failures   int64 // accepted but no answer (transport error, ctx ended)
	Throttles  int64 // refusals (Runtime.Unavailable): retried, or rejected (Spec.Next)
	Abandoned  int64 // never accepted: still throttled when the window closed
	FirstErr   string
	// HTTPErrors counts the wrong answers that were an HTTP door's
	// response of status 400 or more, by status.
	HTTPErrors map[int]int64
	MaxLag     time.Duration // open: worst delay of a send behind its intended time (the schedule's own)
	Hist       *hdrhistogram.Histogram
	// Groups holds the latencies of the items of each group (Item.Group),
	// at most maxGroups of them; the others share otherGroup.
	Groups map[string]*hdrhistogram.Histogram
}

// Bounds of the latencies kept per group.
const (
	maxGroups  = 64
	otherGroup = "(other files)"
)

// Answered is the invocations answered: OK + FuncErrors + Wrong.
func (s *Stats) Answered() int64 { return s.OK + s.FuncErrors + s.Wrong }

// Add folds o (a later load on the same target) into s; latencies are not
// merged.
func (s *Stats) Add(o Stats) {
	s.OK += o.OK
	s.FuncErrors += o.FuncErrors
	s.Wrong += o.Wrong
	s.Failures += o.Failures
	s.Throttles += o.Throttles
	s.Abandoned += o.Abandoned
	if s.FirstErr == "" {
		s.FirstErr = o.FirstErr
	}
	for status, n := range o.HTTPErrors {
		if s.HTTPErrors == nil {
			s.HTTPErrors = map[int]int64{}
		}
		s.HTTPErrors[status] += n
	}
}

// NewHist records nanoseconds from 1 ns to 5 min with 3 significant digits.
func NewHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(5*time.Minute), 3) }

// recorder collects answers from many goroutines.
type recorder struct {
	ok, funcErrors, wrong, failures, throttles, abandoned atomic.Int64

	mu         sync.Mutex
	hist       *hdrhistogram.Histogram
	groups     map[string]*hdrhistogram.Histogram
	firstErr   string
	httpErrors map[int]int64

	progress *atomic.Int64 // Spec.Answered
}

func newRecorder() *recorder { return &recorder{hist: NewHist()} }

// do sends one invocation, retrying throttles after pause until it is
// accepted, or until the window closes (sendBy; zero means never) or ctx
// ends; with next set, a throttle is not retried: do returns at once and
// the caller sends its next invocation. With intended set (open model),
// latency runs from that time, so a late send counts against the target as
// a caller would see it; otherwise it is the target's own latency.
func (r *recorder) do(ctx context.Context, inv Invoker, it *Item, pause time.Duration, next bool, sendBy, intended time.Time) {
	for {
		o, err := inv.Invoke(ctx, it.Payload)
		if err == nil && o.Throttled {
			r.throttles.Add(1)
			if next {
				return
			}
			if ctx.Err() != nil || (!sendBy.IsZero() && time.Now().After(sendBy)) {
				r.abandoned.Add(1)
				return
			}
			retryWait(ctx, inv, pause)
			continue
		}
		if err != nil {
			r.failures.Add(1)
			r.firstError(it.Name + ": " + err.Error())
			return
		}
		lat := o.Latency
		if !intended.IsZero() {
			lat = time.Since(intended)
		}
		switch {
		case !it.Check(o):
			r.wrong.Add(1)
			r.firstError(it.Name + ": unexpected answer " + o.FunctionError + " " + show.Abbreviate(o.Body, 200))
			if s, ok := httpStatus(o.Body); ok && s >= 400 {
				r.mu.Lock()
				if r.httpErrors == nil {
					r.httpErrors = map[int]int64{}
				}
				r.httpErrors[s]++
				r.mu.Unlock()
			}
		case o.FunctionError != "":
			r.funcErrors.Add(1)
		default:
			r.ok.Add(1)
		}
		r.mu.Lock()
		_ = r.hist.RecordValue(max(int64(lat), 1)) // above 5 min: dropped, cannot happen within the bounds
		if it.Group != "" {
			_ = r.group(it.Group).RecordValue(max(int64(lat), 1))
		}
		r.mu.Unlock()
		if r.progress != nil {
			r.progress.Add(1)
		}
		return
	}
}

// group is the histogram of group g; r.mu is held.
func (r *recorder) group(g string) *hdrhistogram.Histogram {
	if r.groups == nil {
		r.groups = map[string]*hdrhistogram.Histogram{}
	}
	h := r.groups[g]
	if h == nil {
		if len(r.groups) >= maxGroups-1 {
			g = otherGroup
		}
		if h = r.groups[g]; h == nil {
			h = NewHist()
			r.groups[g] = h
		}
	}
	return h
}

// firstError keeps msg if it is the first error.
func (r *recorder) firstError(msg string) {
	r.mu.Lock()
	if r.firstErr == "" {
		r.firstErr = msg
	}
	r.mu.Unlock()
}

func (r *recorder) stats(elapsed time.Duration) Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{
		Elapsed: elapsed, OK: r.ok.Load(), FuncErrors: r.funcErrors.Load(), Wrong: r.wrong.Load(),
		Failures: r.failures.Load(), Throttles: r.throttles.Load(), Abandoned: r.abandoned.Load(),
		FirstErr: r.firstErr, HTTPErrors: maps.Clone(r.httpErrors), Hist: r.hist, Groups: r.groups,
	}
}

// RejectedPct is throttles / (answered + throttles) in percent.
func RejectedPct(answered, throttles int64) float64 {
	if answered+throttles == 0 {
		return 0
	}
	return 100 * float64(throttles) / float64(answered+throttles)
}
