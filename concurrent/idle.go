package concurrent

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Memory back to the OS after a burst. The Go runtime returns freed heap
// to the OS only gradually (the scavenger), so the RSS after a burst of
// large responses stays near its peak for minutes. Once no invocation has
// been in flight for idleFreeAfter, the runtime calls debug.FreeOSMemory,
// once per burst: a forced GC whose cost (a few ms of CPU, more with a
// large live heap) is paid while nothing runs, and never again until an
// invocation has run.
var (
	// idleFreeAfter: long enough that a steady trickle of invocations
	// never triggers it, short enough that the memory is back well within
	// the seconds an environment may stay idle. A constant rather than an
	// LMIGO_ variable: the variables belong to limits.
	idleFreeAfter = 2 * time.Second
	// idleCheckEvery is how often the idle state is looked at.
	idleCheckEvery = 250 * time.Millisecond
	// freeOSMemory and idleClock are replaced by tests.
	freeOSMemory = debug.FreeOSMemory
	idleClock    = func() time.Duration { return time.Since(idleEpoch) }
	idleEpoch    = time.Now()
)

// idleTracker counts invocations in flight for the idle free.
type idleTracker struct {
	begun    atomic.Uint64 // invocations begun
	inflight atomic.Int64
	lastEnd  atomic.Int64 // idleClock() when the last one ended
}

func (t *idleTracker) begin() {
	t.begun.Add(1)
	t.inflight.Add(1)
}

func (t *idleTracker) end(now time.Duration) {
	t.lastEnd.Store(int64(now))
	t.inflight.Add(-1)
}

// startIdleFree starts the goroutine that frees memory for the OS once per
// burst; stop ends it and waits for it.
func (rt *Runtime) startIdleFree() (stop func()) {
	after, free, now := idleFreeAfter, freeOSMemory, idleClock
	var freed uint64 // invocations begun at the last free
	return every(idleCheckEvery, func(time.Time) {
		n := rt.idle.begun.Load()
		if n == freed || rt.idle.inflight.Load() != 0 ||
			now()-time.Duration(rt.idle.lastEnd.Load()) < after ||
			rt.idle.begun.Load() != n { // one began meanwhile
			return
		}
		free()
		freed = n
	})
}
