package main

import (
	"context"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lmigo/lmigo/loadtest/show"
	"golang.org/x/sys/unix"
)

// Load models. Every run is bounded twice, by a number of invocations and
// by a send window; it stops by itself at whichever comes first. The window
// closes the sending of new invocations only: an invocation already
// accepted is waited for until ctx ends, because abandoning it would make
// the runtime's /response get 400, on which aws-lambda-go exits.
const (
	modelClosed = "closed"
	modelOpen   = "open"
	modelWaves  = "waves" // grow and stack:S (wavesLoad): not a -model
)

// loadSpec describes one load.
type loadSpec struct {
	model   string
	callers int     // closed: concurrent callers
	rate    float64 // open: intended invocations per second
	count   int     // invocations to send at most
	window  time.Duration
	items   []item        // cycled
	pause   time.Duration // wait before retrying a throttled invocation (0: see retryWait)
	// next: a throttled invocation is not retried; it counts as rejected
	// and its caller goes on at once (see onThrottleNext).
	next bool
	// answered, when set, counts every answer as it comes: the progress
	// of a run on a terminal.
	answered *atomic.Int64
	// poisson, when not 0, seeds the open model's arrivals at random (a
	// Poisson process at rate): the same seed sends at the same times.
	poisson uint64
}

// loadStats is what a load observed. Answered = OK + FuncErrors + Wrong.
type loadStats struct {
	Elapsed    time.Duration
	OK         int64 // right answer
	FuncErrors int64 // function error, as asked
	Wrong      int64 // an answer that failed its check
	Failures   int64 // accepted but no answer (transport error, ctx ended)
	Throttles  int64 // refusals (Runtime.Unavailable): retried, or rejected (loadSpec.next)
	Abandoned  int64 // never accepted: still throttled when the window closed
	FirstErr   string
	// HTTPErrors counts the wrong answers that were an HTTP door's
	// response of status 400 or more, by status.
	HTTPErrors map[int]int64
	MaxLag     time.Duration // open: worst delay of a send behind its intended time (the schedule's own)
	Hist       *hdrhistogram.Histogram
	// Groups holds the latencies of the items of each group (item.group),
	// at most maxGroups of them; the others share otherGroup.
	Groups map[string]*hdrhistogram.Histogram
}

// Bounds of the latencies kept per group.
const (
	maxGroups  = 64
	otherGroup = "(other files)"
)

func (s *loadStats) answered() int64 { return s.OK + s.FuncErrors + s.Wrong }

// add folds o (a later load on the same target) into s; latencies are not
// merged.
func (s *loadStats) add(o loadStats) {
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

// newHist records nanoseconds from 1 ns to 5 min with 3 significant digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(5*time.Minute), 3) }

// recorder collects answers from many goroutines.
type recorder struct {
	ok, funcErrors, wrong, failures, throttles, abandoned atomic.Int64

	mu         sync.Mutex
	hist       *hdrhistogram.Histogram
	groups     map[string]*hdrhistogram.Histogram
	firstErr   string
	httpErrors map[int]int64

	progress *atomic.Int64 // loadSpec.answered
}

func newRecorder() *recorder { return &recorder{hist: newHist()} }

// do sends one invocation, retrying throttles after pause until it is
// accepted, or until the window closes (sendBy; zero means never) or ctx
// ends; with next set, a throttle is not retried: do returns at once and
// the caller sends its next invocation. With intended set (open model),
// latency runs from that time, so a late send counts against the target as
// a caller would see it; otherwise it is the target's own latency.
func (r *recorder) do(ctx context.Context, inv invoker, it *item, pause time.Duration, next bool, sendBy, intended time.Time) {
	for {
		o, err := inv.Invoke(ctx, it.payload)
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
			r.firstError(it.name + ": " + err.Error())
			return
		}
		lat := o.Latency
		if !intended.IsZero() {
			lat = time.Since(intended)
		}
		switch {
		case !it.check(o):
			r.wrong.Add(1)
			r.firstError(it.name + ": unexpected answer " + o.FunctionError + " " + show.Abbreviate(o.Body, 200))
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
		if it.group != "" {
			_ = r.group(it.group).RecordValue(max(int64(lat), 1))
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
			h = newHist()
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

func (r *recorder) stats(elapsed time.Duration) loadStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return loadStats{
		Elapsed: elapsed, OK: r.ok.Load(), FuncErrors: r.funcErrors.Load(), Wrong: r.wrong.Load(),
		Failures: r.failures.Load(), Throttles: r.throttles.Load(), Abandoned: r.abandoned.Load(),
		FirstErr: r.firstErr, HTTPErrors: maps.Clone(r.httpErrors), Hist: r.hist, Groups: r.groups,
	}
}

// runLoad runs spec against inv.
func runLoad(ctx context.Context, inv invoker, spec loadSpec) loadStats {
	if spec.model == modelOpen {
		return openLoop(ctx, inv, spec)
	}
	return closedLoop(ctx, inv, spec)
}

// closedLoop runs spec.callers callers; each sends its next invocation the
// moment it has an answer.
func closedLoop(ctx context.Context, inv invoker, spec loadSpec) loadStats {
	rec := newRecorder()
	rec.progress = spec.answered
	start := time.Now()
	sendBy := start.Add(spec.window)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range max(spec.callers, 1) {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(sendBy) {
				i := next.Add(1) - 1
				if i >= int64(spec.count) {
					return
				}
				rec.do(ctx, inv, &spec.items[i%int64(len(spec.items))], spec.pause, spec.next, sendBy, time.Time{})
			}
		})
	}
	wg.Wait()
	return rec.stats(time.Since(start))
}

// openLoop is the open model: invocation i is sent at start + i/rate by
// the clock alone, each from a goroutine of its own, so the schedule never
// waits for an answer: a slow or stalled target delays no send. Latency
// runs from the intended time, so a stall of the target shows in every
// invocation it delayed, not in one (no coordinated omission). The
// invocations in flight are bounded by spec.count; the schedule ends at
// the window, and openLoop returns once every invocation sent has ended.
// MaxLag is how late the schedule itself ran behind the clock.
func openLoop(ctx context.Context, inv invoker, spec loadSpec) loadStats {
	rec := newRecorder()
	rec.progress = spec.answered
	var wg sync.WaitGroup
	start := time.Now()
	sendBy := start.Add(spec.window)
	var maxLag time.Duration
	next := schedule(spec)
	for i := 0; i < spec.count; i++ {
		t := start.Add(next())
		if t.After(sendBy) || !sleepUntil(ctx, t) {
			break
		}
		maxLag = max(maxLag, time.Since(t))
		it := &spec.items[i%len(spec.items)]
		wg.Go(func() { rec.do(ctx, inv, it, spec.pause, spec.next, sendBy, t) })
	}
	wg.Wait()
	st := rec.stats(time.Since(start))
	st.MaxLag = maxLag
	return st
}

// schedule returns, call by call, when each invocation of an open load
// is due after its start: i/rate, or with spec.poisson at random, each
// gap drawn from the exponential distribution of mean 1/rate.
func schedule(spec loadSpec) func() time.Duration {
	gap := float64(time.Second) / spec.rate
	if spec.poisson == 0 {
		i := 0
		return func() time.Duration {
			d := time.Duration(float64(i) * gap)
			i++
			return d
		}
	}
	r := rand.New(rand.NewPCG(spec.poisson, spec.poisson^0x9e3779b97f4a7c15))
	var at float64
	first := true
	return func() time.Duration {
		if !first {
			at += r.ExpFloat64() * gap
		}
		first = false
		return time.Duration(at)
	}
}

// retryWait waits before a throttled invocation is retried: d when d > 0;
// otherwise, when the target can tell (the fake API), until a /next is
// pending again (see fakeInvoker.waitReady), else 1 ms. Waiting for the
// poll retries at the moment the runtime can take the invocation and
// costs no CPU, so the figures measure the runtime, not the retry policy.
// A fixed pause is at least about a millisecond: Go's timers are that
// coarse on Linux.
func retryWait(ctx context.Context, inv invoker, d time.Duration) {
	if d <= 0 {
		if w, ok := inv.(readyWaiter); ok {
			w.waitReady(ctx)
			return
		}
		d = time.Millisecond
	}
	sleepCtx(ctx, d)
}

// sleepUntil sleeps until t or until ctx ends, and reports whether ctx is
// still live. Go's timers wake about a millisecond late on Linux, which
// would send open-loop invocations in bursts and add up to 1 ms to their
// latency; the last 2 ms are slept in nanosleep, which blocks only this
// goroutine's thread and wakes within about 100 µs.
func sleepUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t) - 2*time.Millisecond; d > 0 && !sleepCtx(ctx, d) {
		return false
	}
	// A signal (Go preempts with SIGURG) ends a nanosleep early.
	for d := time.Until(t); d > 0; d = time.Until(t) {
		ts := unix.NsecToTimespec(int64(d))
		_ = unix.Nanosleep(&ts, nil)
	}
	return ctx.Err() == nil
}

// sleepCtx sleeps d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// wavesLoad sends waves of n concurrent invocations, one wave per item of
// wave in turn, rounds times, so that every one of the n slots serves
// every item; the items' gather holds the n invocations of a wave in the
// handler at once. A throttled invocation of a wave is retried until ctx
// ends even after the window (the others of its wave wait for it in the
// handler), whatever loadSpec.next says elsewhere; the window only stops
// new waves.
func wavesLoad(ctx context.Context, inv invoker, wave []item, n, rounds int, window, pause time.Duration) loadStats {
	rec := newRecorder()
	start := time.Now()
	sendBy := start.Add(window)
	for r := 0; r < rounds; r++ {
		for i := range wave {
			if ctx.Err() != nil || time.Now().After(sendBy) {
				return rec.stats(time.Since(start))
			}
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() { rec.do(ctx, inv, &wave[i], pause, false, time.Time{}, time.Time{}) })
			}
			wg.Wait()
		}
	}
	return rec.stats(time.Since(start))
}
