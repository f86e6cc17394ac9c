package load

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Load models. Every run is bounded twice, by a number of invocations and
// by a send window; it stops by itself at whichever comes first. The window
// closes the sending of new invocations only: an invocation already
// accepted is waited for until ctx ends, because abandoning it would make
// the runtime's /response get 400, on which aws-lambda-go exits.
const (
	ModelClosed = "closed"
	ModelOpen   = "open"
	ModelWaves  = "waves" // grow and stack:S (RunWaves)
)

// OpenGrace is how long after its schedule an open load may still retry a
// throttled invocation, where its window is the schedule's own.
const OpenGrace = 2 * time.Second

// Spec describes one load.
type Spec struct {
	Model   string
	Callers int     // closed: concurrent callers
	Rate    float64 // open: intended invocations per second
	Count   int     // invocations to send at most
	Window  time.Duration
	Items   []Item        // cycled
	Pause   time.Duration // wait before retrying a throttled invocation (0: see retryWait)
	// Next: a throttled invocation is not retried; it counts as rejected
	// and its caller goes on at once.
	Next bool
	// Answered, when set, counts every answer as it comes: the progress
	// of a run on a terminal.
	Answered *atomic.Int64
	// Poisson, when not 0, seeds the open model's arrivals at random (a
	// Poisson process at rate): the same seed sends at the same times.
	Poisson uint64
}

// Run runs spec against inv.
func Run(ctx context.Context, inv Invoker, spec Spec) Stats {
	if spec.Model == ModelOpen {
		return openLoop(ctx, inv, spec)
	}
	return closedLoop(ctx, inv, spec)
}

// closedLoop runs spec.Callers callers; each sends its next invocation the
// moment it has an answer.
func closedLoop(ctx context.Context, inv Invoker, spec Spec) Stats {
	rec := newRecorder()
	rec.progress = spec.Answered
	start := time.Now()
	sendBy := start.Add(spec.Window)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range max(spec.Callers, 1) {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(sendBy) {
				i := next.Add(1) - 1
				if i >= int64(spec.Count) {
					return
				}
				rec.do(ctx, inv, &spec.Items[i%int64(len(spec.Items))], spec.Pause, spec.Next, sendBy, time.Time{})
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
// invocations in flight are bounded by spec.Count; the schedule ends at
// the window, and openLoop returns once every invocation sent has ended.
// MaxLag is how late the schedule itself ran behind the clock.
func openLoop(ctx context.Context, inv Invoker, spec Spec) Stats {
	rec := newRecorder()
	rec.progress = spec.Answered
	var wg sync.WaitGroup
	start := time.Now()
	sendBy := start.Add(spec.Window)
	var maxLag time.Duration
	next := schedule(spec)
	for i := 0; i < spec.Count; i++ {
		t := start.Add(next())
		if t.After(sendBy) || !sleepUntil(ctx, t) {
			break
		}
		maxLag = max(maxLag, time.Since(t))
		it := &spec.Items[i%len(spec.Items)]
		wg.Go(func() { rec.do(ctx, inv, it, spec.Pause, spec.Next, sendBy, t) })
	}
	wg.Wait()
	st := rec.stats(time.Since(start))
	st.MaxLag = maxLag
	return st
}

// schedule returns, call by call, when each invocation of an open load
// is due after its start: i/rate, or with spec.Poisson at random, each
// gap drawn from the exponential distribution of mean 1/rate.
func schedule(spec Spec) func() time.Duration {
	gap := float64(time.Second) / spec.Rate
	if spec.Poisson == 0 {
		i := 0
		return func() time.Duration {
			d := time.Duration(float64(i) * gap)
			i++
			return d
		}
	}
	r := rand.New(rand.NewPCG(spec.Poisson, spec.Poisson^0x9e3779b97f4a7c15))
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

// RunWaves sends waves of n concurrent invocations, one wave per item of
// wave in turn, rounds times, so that every one of the n slots serves
// every item; the items' gather holds the n invocations of a wave in the
// handler at once. A throttled invocation of a wave is retried until ctx
// ends even after the window (the others of its wave wait for it in the
// handler), whatever Spec.Next says elsewhere; the window only stops
// new waves.
func RunWaves(ctx context.Context, inv Invoker, wave []Item, n, rounds int, window, pause time.Duration) Stats {
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

// WarmUp sends items one after the other, each retried until it is
// answered: the waves workloads' warm-up, after which RSS is read the
// first time.
func WarmUp(ctx context.Context, inv Invoker, items []Item, pause time.Duration) Stats {
	rec := newRecorder()
	start := time.Now()
	for i := range items {
		rec.do(ctx, inv, &items[i], pause, false, time.Time{}, time.Time{})
	}
	return rec.stats(time.Since(start))
}
