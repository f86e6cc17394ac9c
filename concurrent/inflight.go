package concurrent

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// In-flight accounting. An invocation is counted as it begins and as it
// is answered (begin and end, end.go), in two sets of counters.
// idleTracker's are read by the idle free below and by admission
// (admission.go).
// runtimeMetrics' feed the EMF metrics (metrics.go) when they are on.
// Both live here, so that an invocation updates its counts in one file.

// Memory back to the OS after a burst. The Go runtime returns freed heap
// to the OS only gradually (the scavenger), so the RSS after a burst of
// large responses stays near its peak for minutes. Once no invocation has
// been in flight for idleFreeAfter, the runtime calls debug.FreeOSMemory,
// once per burst. It is a forced GC whose cost (a few ms of CPU, more with
// a large live heap) is paid while nothing runs. It runs never again until
// an invocation has run. The constants are idleTracker's defaults.
const (
	// idleFreeAfter: long enough that a steady trickle of invocations
	// never triggers it, short enough that the memory is back well within
	// the seconds an environment may stay idle. A constant rather than an
	// LMIGO_ variable: the variables belong to limits.
	idleFreeAfter = 2 * time.Second
	// idleCheckEvery is how often the idle state is looked at.
	idleCheckEvery = 250 * time.Millisecond
)

var idleEpoch = time.Now()

// idleClock reads the monotonic clock.
func idleClock() time.Duration { return time.Since(idleEpoch) }

// idleTracker counts invocations in flight for the idle free.
type idleTracker struct {
	// Set by init, read by startIdleFree; tests change them before Run.
	freeAfter  time.Duration // idleFreeAfter
	checkEvery time.Duration // idleCheckEvery
	free       func()        // debug.FreeOSMemory

	begun    atomic.Uint64 // invocations begun
	inflight atomic.Int64
	lastEnd  atomic.Int64 // idleClock() when the last one ended
}

// init sets the defaults.
func (t *idleTracker) init() {
	t.freeAfter, t.checkEvery, t.free = idleFreeAfter, idleCheckEvery, freeMemory
}

// freeMemory hands memory back to the OS (debug.FreeOSMemory), and again
// while the goroutines' stacks shrink, at most freeRounds times. A GC
// halves a parked goroutine's stack at most once. A slot's goroutine
// keeps the stack a deep handler grew (32 KiB: three GCs to its parked 4
// KiB). Without grown stacks it is one round.
func freeMemory() {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/stacks:bytes"}}
	stacks := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	before := stacks()
	for range freeRounds {
		debug.FreeOSMemory()
		after := stacks()
		if after >= before {
			return
		}
		before = after
	}
}

// freeRounds bounds freeMemory: a stack of 4 MiB back to 4 KiB.
const freeRounds = 10

func (t *idleTracker) begin() {
	t.begun.Add(1)
	t.inflight.Add(1)
}

func (t *idleTracker) end(now time.Duration) {
	t.lastEnd.Store(int64(now))
	t.inflight.Add(-1)
}

// countIn counts the invocation of s in flight as it begins: in
// the metrics, and for the idle free.
func (s *slot) countIn() {
	s.rt.metrics.begin()
	s.rt.idle.begin()
}

// countOut counts the invocation of s out as it ends (end), or as
// the overrun watch replaces s (replace).
func (s *slot) countOut() {
	s.rt.metrics.end()
	s.rt.idle.end(idleClock())
}

// startIdleFree starts the goroutine that frees memory for the OS once per
// burst; stop ends it and waits for it.
func (rt *Runtime) startIdleFree() (stop func()) {
	after, free := rt.idle.freeAfter, rt.idle.free
	var freed uint64 // invocations begun at the last free
	return every(rt.idle.checkEvery, func(time.Time) {
		n := rt.idle.begun.Load()
		if n == freed || rt.idle.inflight.Load() != 0 ||
			idleClock()-time.Duration(rt.idle.lastEnd.Load()) < after ||
			rt.idle.begun.Load() != n { // one began meanwhile
			return
		}
		free()
		freed = n
	})
}

// now reads the monotonic clock, never 0.
func (m *runtimeMetrics) now() int64 { return int64(time.Since(m.epoch)) + 1 }

// begin counts an invocation taking its slot.
func (m *runtimeMetrics) begin() {
	if m == nil {
		return
	}
	m.invocations.Add(1)
	n := m.inflight.Add(1)
	if n == m.slots {
		m.busySince.Store(m.now())
	}
	for {
		hi := m.maxInflight.Load()
		if n <= hi || m.maxInflight.CompareAndSwap(hi, n) {
			return
		}
	}
}

// end counts an invocation answered.
func (m *runtimeMetrics) end() {
	if m == nil {
		return
	}
	// A begin that stored busySince late (after this Swap) leaves a stale
	// value. But the next end that frees a slot follows a begin that fills
	// the last one, which stores it anew: nothing stale is ever added.
	if m.inflight.Add(-1) == m.slots-1 {
		if since := m.busySince.Swap(0); since != 0 {
			m.busyTime.Add(m.now() - since)
		}
	}
}
