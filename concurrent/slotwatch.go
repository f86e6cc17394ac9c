package concurrent

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The slot's side of the overrun watch (overrun.go). A slot records its
// goroutine's ID as it starts, puts each invocation under the watch as it
// begins (startWatch) and takes it back as it is answered (endWatch),
// both on the watch's monotonic clock (mono). A slot the watch replaced
// retires once its handler returns. The watch calls these; they call
// nothing of the watch's.

// What slot.watch holds besides a deadline (on the monotonic clock, mono,
// > 0: see watchDeadline).
const (
	watchNone     = 0  // no invocation under watch
	watchTaking   = -1 // the watch is deciding about the invocation: its answer waits
	watchHeld     = -2 // overran; not replaced (the bound): the slot stays
	watchReplaced = -3 // overran and replaced: the slot retires once its handler returns
)

// goroutineID is the ID of the calling goroutine, from the first line of
// its stack ("goroutine 123 [running]:"). A slot's goroutine records it
// once, so that the watch can find its stack.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, _ = bytes.CutPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		id, _ := strconv.ParseUint(string(b[:i]), 10, 64)
		return id
	}
	return 0
}

// startWatch puts s's invocation under the overrun watch as it begins,
// with its deadline on the monotonic clock (watchDeadline).
func (s *slot) startWatch() {
	s.deadline = watchDeadline(s.inv.Deadline, time.Now())
	if !s.inv.Deadline.IsZero() && s.inv.DeadlineErr == nil {
		s.watch.Store(s.deadline)
	}
}

// maxInvocation is Lambda's longest function timeout: no invocation is
// held by the platform for longer.
const maxInvocation = 15 * time.Minute

// monoBase anchors the watch's monotonic clock (mono).
var monoBase = time.Now()

// mono is t on the watch's monotonic clock, in nanoseconds, > 0.
func mono(t time.Time) int64 { return int64(t.Sub(monoBase)) + 1 }

// watchDeadline is the deadline of an invocation handed out at now, on the
// monotonic clock. It is what remained of it at hand-out, so that a step
// of the wall clock moves no deadline. A deadline already past at hand-out
// is one the platform does not share: its clock and ours disagree. The
// platform ends the invocation by its own clock, at the latest
// maxInvocation after hand-out, which bounds it instead.
func watchDeadline(deadline, now time.Time) int64 {
	left := deadline.Sub(now)
	if left <= 0 {
		left = maxInvocation
	}
	return mono(now.Add(left))
}

// endWatch takes s's invocation back from the overrun watch as it is
// answered, before the answer is written (mayQueue, and serve's last
// word). It returns false once the watch has replaced the slot. That
// slot's answer then goes alone, with no poll behind it.
func (s *slot) endWatch() bool {
	for {
		switch v := s.watch.Load(); v {
		case watchNone:
			return true
		case watchReplaced:
			return false
		case watchTaking:
			runtime.Gosched() // the watch decides within microseconds
		default: // a deadline, or watchHeld
			if s.watch.CompareAndSwap(v, watchNone) {
				return true
			}
		}
	}
}

// retire ends a replaced slot once its handler has returned and its answer
// has been posted. Its connection closes and its buffers go with it. Its
// goroutine leaves the pool (runSlot returns).
func (s *slot) retire() {
	rt := s.rt
	_ = s.conn.Close()
	rt.slotsMu.Lock()
	if i := slices.IndexFunc(rt.overruns, func(o *overrun) bool { return o.s == s }); i >= 0 {
		rt.overruns = slices.Delete(rt.overruns, i, i+1)
	}
	if len(rt.overruns) < rt.cfg.MaxOverruns {
		rt.boundLogged.Store(false)
	}
	rt.slotsMu.Unlock()
	logInvocation(rt.log, zapcore.InfoLevel, &s.inv, msgOverrunReturned,
		zap.Duration("pastDeadline", time.Since(s.inv.Deadline)))
}

// overrunsNow is how many handlers overrun now: replaced or held.
func (rt *Runtime) overrunsNow() int {
	rt.slotsMu.RLock()
	defer rt.slotsMu.RUnlock()
	n := len(rt.overruns)
	for _, s := range rt.slots {
		if w := s.watch.Load(); w == watchHeld || w == watchTaking {
			n++
		}
	}
	return n
}
