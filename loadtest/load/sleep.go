package load

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// retryWait waits before a throttled invocation is retried: d when d > 0;
// otherwise, when the target can tell (the fake API's Invoker has
// WaitReady), until a /next is pending again, else 1 ms. Waiting for the
// poll retries at the moment the runtime can take the invocation and
// costs no CPU, so the figures measure the runtime, not the retry policy.
// A fixed pause is at least about a millisecond: Go's timers are that
// coarse on Linux.
func retryWait(ctx context.Context, inv Invoker, d time.Duration) {
	if d <= 0 {
		if w, ok := inv.(readyWaiter); ok {
			w.WaitReady(ctx)
			return
		}
		d = time.Millisecond
	}
	SleepCtx(ctx, d)
}

// sleepUntil sleeps until t or until ctx ends, and reports whether ctx is
// still live. Go's timers wake about a millisecond late on Linux, which
// would send open-loop invocations in bursts and add up to 1 ms to their
// latency; the last 2 ms are slept in nanosleep, which blocks only this
// goroutine's thread and wakes within about 100 µs.
func sleepUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t) - 2*time.Millisecond; d > 0 && !SleepCtx(ctx, d) {
		return false
	}
	// A signal (Go preempts with SIGURG) ends a nanosleep early.
	for d := time.Until(t); d > 0; d = time.Until(t) {
		ts := unix.NsecToTimespec(int64(d))
		_ = unix.Nanosleep(&ts, nil)
	}
	return ctx.Err() == nil
}

// SleepCtx sleeps d or until ctx ends; it reports whether ctx is still live.
func SleepCtx(ctx context.Context, d time.Duration) bool {
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
