package concurrent

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Memory-aware admission. When the live heap nears the Go runtime's memory
// limit, the slots stop taking new invocations. A slot whose invocation has
// ended does not queue its next /next. A slot with no poll queued waits
// before it polls. The Runtime API then has fewer polls, so Lambda
// throttles the invokes it cannot place here and retries them elsewhere.
// Otherwise this environment could be killed for memory, with every
// invocation in flight lost. Invocations in flight are never touched, and
// a poll already queued is always read.
//
// A hold lets one slot through whenever nothing is in flight. With nothing
// running, waiting frees nothing. A heap that settled between the two
// marks would otherwise stop the environment for good. That slot polls,
// serves and gives the pass back when its invocation has ended; while it
// is out, or any invocation runs, the others wait. So while memory stays high
// invocations are served one at a time, and every slot polls again once
// the live heap is below the low mark.
//
// The signal is the live heap (runtime/metrics /gc/heap/live:bytes: what
// the last GC found reachable), against the limit (/gc/gomemlimit:bytes).
// The heap's total (live plus garbage) is not used: with a limit set, the
// GC lets garbage grow up to the limit on purpose, which is no danger.
// Without a limit (none derived, GOMEMLIMIT unset) there is nothing to
// compare with, and admission is off.
//
// The live heap changes only when a GC ends. A runtime holding back with
// nothing to allocate would wait forever for a figure that cannot move.
// So while it holds back, one waiting slot forces a GC, then reads the
// figure again. It does so when the hold begins, and whenever an
// invocation has ended since the last one. The GC is debug.FreeOSMemory
// when nothing is in flight, which also hands the memory back to the OS,
// and runtime.GC otherwise. While invocations run it forces one at least
// every memCollectEvery too, since one may drop memory without ending.
// With nothing in flight and nothing ended a GC cannot change the figure,
// and none is forced.
//
// A third mark says the process's last words. When the live heap crosses
// memExhaustedFraction of the limit, the environment is about to be
// killed for memory, and the platform will name no invocation. So one
// ERROR names the invocations in flight, at most once until the heap is
// below the low mark again. The figure is read after each GC, by a
// finalizer that each GC runs (watchExhaustion): nothing is read or
// allocated on the hot path for it.
const (
	// Hold back from memHighFraction of the limit and resume below
	// memLowFraction. With the live heap at 85 % of the limit the GC
	// already runs after every 15 % of it allocated. One more large
	// invocation may not fit. The gap between the two marks keeps the
	// slots from flapping on every GC. Constants rather than LMIGO_
	// variables: the variables belong to limits.
	memHighFraction = 0.85
	memLowFraction  = 0.70
	// memExhaustedFraction: past it a GC barely frees anything, and the
	// heap's overshoot of the soft limit meets the function's memory.
	memExhaustedFraction = 0.95
	// maxInFlightNamed bounds the request IDs the last words name.
	maxInFlightNamed = 64
	// The defaults of memGuard's timing. memCheckEvery bounds how often
	// the hot path reads the metric. In between it uses the last verdict
	// (an atomic load).
	memCheckEvery = 2 * time.Millisecond
	// memRecheckEvery is how often the slot that leads a hold re-reads
	// it. memWaitEvery is how often the others look whether to lead.
	memRecheckEvery = 10 * time.Millisecond
	memWaitEvery    = 100 * time.Millisecond
	// A forced GC at most every memCollectMin, and at least every
	// memCollectEvery while holding back with invocations in flight.
	memCollectMin   = 20 * time.Millisecond
	memCollectEvery = time.Second
)

var memEpoch = time.Now()

// memClock reads the monotonic clock, never 0.
func memClock() int64 { return int64(time.Since(memEpoch)) + 1 }

// readRuntimeHeap returns the live heap and the memory limit; it does not
// allocate. The limit is math.MaxInt64 when none is set.
func readRuntimeHeap(samples []metrics.Sample) (live, limit uint64) {
	samples[0].Name = "/gc/heap/live:bytes"
	samples[1].Name = "/gc/gomemlimit:bytes"
	metrics.Read(samples[:2])
	if samples[0].Value.Kind() == metrics.KindUint64 {
		live = samples[0].Value.Uint64()
	}
	limit = math.MaxInt64
	if samples[1].Value.Kind() == metrics.KindUint64 {
		limit = samples[1].Value.Uint64()
	}
	return live, limit
}

// collectGarbage forces a GC, handing the memory back to the OS as well
// when nothing is in flight.
func collectGarbage(idle bool) {
	if idle {
		debug.FreeOSMemory()
	} else {
		runtime.GC()
	}
}

// memGuard is the admission state of one Runtime.
type memGuard struct {
	// Set by init, read-only afterwards; tests change them before Run, so
	// that no test changes another's timing or heap figure.
	checkEvery   time.Duration                               // memCheckEvery
	recheckEvery time.Duration                               // memRecheckEvery
	waitEvery    time.Duration                               // memWaitEvery
	collectMin   time.Duration                               // memCollectMin
	collectEvery time.Duration                               // memCollectEvery
	read         func([]metrics.Sample) (live, limit uint64) // readRuntimeHeap
	collect      func(idle bool)                             // collectGarbage

	held atomic.Bool
	last atomic.Int64 // memClock() of the last read, 0 to force one
	// resume is closed when the hold in progress ends.
	resume atomic.Pointer[chan struct{}]
	leader atomic.Bool // a waiting slot re-reads on recheckEvery
	// through: a slot let through while held is out (slot.through).
	through atomic.Bool

	holds     atomic.Uint64 // holds begun
	heldTotal atomic.Int64  // time held in ended holds, and in the open one up to heldSince

	// The hard mark's (watchExhaustion), under words.
	words     sync.Mutex
	wordsOff  bool // Run has ended: no more checks
	exhausted bool // the last words were said, and the heap is not below the low mark since
	gcSamples [2]metrics.Sample

	// mu (TryLock on the hot path) makes one reader at a time; it guards
	// the rest.
	mu        sync.Mutex
	samples   [2]metrics.Sample
	heldSince int64 // memClock() at the start of the hold, or of the last takeHeldTime
	holdBegan int64
	lastGC    int64
	gcEnded   uint64 // invocations ended at the last forced GC
	gcHold    uint64 // the hold of the last forced GC
	live      uint64
	limit     uint64
}

// init sets the defaults: the real heap figure and GC, at the timing above.
func (g *memGuard) init() {
	g.checkEvery, g.recheckEvery, g.waitEvery = memCheckEvery, memRecheckEvery, memWaitEvery
	g.collectMin, g.collectEvery = memCollectMin, memCollectEvery
	g.read, g.collect = readRuntimeHeap, collectGarbage
}

// holding reports whether new invocations are held back, reading the heap
// at most every checkEvery. It never blocks and does not allocate.
func (rt *Runtime) holding() bool {
	g := &rt.mem
	if now := memClock(); now-g.last.Load() < int64(g.checkEvery) || !g.mu.TryLock() {
		return g.held.Load()
	}
	defer g.mu.Unlock()
	return rt.readLocked()
}

func (rt *Runtime) readLocked() bool {
	g := &rt.mem
	now := memClock()
	g.last.Store(now)
	live, limit := g.read(g.samples[:])
	g.live, g.limit = live, limit
	held := g.held.Load()
	off := limit == 0 || limit >= math.MaxInt64
	switch {
	case !held && !off && float64(live) >= memHighFraction*float64(limit):
		ch := make(chan struct{})
		g.resume.Store(&ch) // before held: a waiter that sees held finds its channel
		g.heldSince, g.holdBegan = now, now
		g.holds.Add(1)
		g.held.Store(true)
		rt.log.Warn("memory high: holding back new invocations",
			zap.Uint64("liveHeapBytes", live), zap.Uint64("memoryLimitBytes", limit))
	case held && (off || float64(live) < memLowFraction*float64(limit)):
		g.held.Store(false)
		g.heldTotal.Add(now - g.heldSince)
		close(*g.resume.Load())
		rt.log.Info("memory back down: taking invocations again",
			zap.Uint64("liveHeapBytes", live), zap.Uint64("memoryLimitBytes", limit),
			zap.Duration("heldBack", time.Duration(now-g.holdBegan)))
		return false
	}
	return g.held.Load()
}

// collect forces a GC while holding back, when one may change the figure.
func (rt *Runtime) collect() {
	g := &rt.mem
	if !g.mu.TryLock() {
		return
	}
	defer g.mu.Unlock()
	inflight := rt.idle.inflight.Load()
	ended := rt.idle.begun.Load() - uint64(max(inflight, 0))
	now := memClock()
	since := now - g.lastGC
	hold := g.holds.Load()
	if since < int64(g.collectMin) ||
		(ended == g.gcEnded && hold == g.gcHold && (inflight == 0 || since < int64(g.collectEvery))) {
		return
	}
	g.collect(inflight == 0)
	g.lastGC, g.gcEnded, g.gcHold = memClock(), ended, hold
	g.last.Store(0) // read the new figure next
}

// admit returns once s may poll, or false when ctx is done first.
func (s *slot) admit(ctx context.Context) bool {
	rt := s.rt
	g := &rt.mem
	if !rt.holding() {
		return true
	}
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		if s.letThrough() {
			return true
		}
		lead := g.leader.CompareAndSwap(false, true)
		wait := g.waitEvery
		if lead {
			rt.collect()
			wait = g.recheckEvery
		}
		if t == nil {
			t = time.NewTimer(wait)
		} else {
			t.Reset(wait)
		}
		var resume <-chan struct{}
		if p := g.resume.Load(); p != nil {
			resume = *p
		}
		select {
		case <-t.C:
		case <-resume:
		case <-ctx.Done():
			if lead {
				g.leader.Store(false)
			}
			return false
		}
		if lead {
			g.leader.Store(false)
		}
		if !rt.holding() {
			return true
		}
	}
}

// letThrough takes the pass for s while held, when nothing is in flight
// and no other slot has it.
func (s *slot) letThrough() bool {
	rt := s.rt
	g := &rt.mem
	if rt.idle.inflight.Load() != 0 || !g.through.CompareAndSwap(false, true) {
		return false
	}
	s.through = true
	return true
}

// takeHeldTime returns the time held back since the last call, counting a
// hold still open up to now.
func (rt *Runtime) takeHeldTime() time.Duration {
	g := &rt.mem
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held.Load() {
		now := memClock()
		g.heldTotal.Add(now - g.heldSince)
		g.heldSince = now
	}
	return time.Duration(g.heldTotal.Swap(0))
}

// watchExhaustion checks the hard mark after each GC until stop. Each GC
// runs the finalizer of a sentinel that nothing references, and the
// finalizer sets itself again on the same sentinel. Finalizers run on
// their own goroutine, so the check is never on a slot's way.
func (rt *Runtime) watchExhaustion() (stop func()) {
	runtime.SetFinalizer(&gcSentinel{rt: rt}, afterGC)
	return func() {
		g := &rt.mem
		g.words.Lock()
		g.wordsOff = true
		g.words.Unlock()
	}
}

type gcSentinel struct{ rt *Runtime }

func afterGC(s *gcSentinel) {
	g := &s.rt.mem
	g.words.Lock()
	defer g.words.Unlock()
	if g.wordsOff {
		return
	}
	live, limit := g.read(g.gcSamples[:])
	s.rt.checkExhausted(live, limit)
	runtime.SetFinalizer(s, afterGC)
}

// checkExhausted says the last words once the live heap crosses the hard
// mark, and once again only after it went below the low mark. The caller
// holds g.words.
func (rt *Runtime) checkExhausted(live, limit uint64) {
	g := &rt.mem
	switch {
	case limit == 0 || limit >= math.MaxInt64:
	case !g.exhausted && float64(live) >= memExhaustedFraction*float64(limit):
		g.exhausted = true
		ids, n := rt.inFlight(maxInFlightNamed)
		rt.log.Error("memory nearly exhausted", zap.Strings("inFlight", ids), zap.Int("inFlightCount", n),
			zap.Uint64("heapBytes", live), zap.Uint64("memoryLimitBytes", limit))
	case g.exhausted && float64(live) < memLowFraction*float64(limit):
		g.exhausted = false
	}
}

// inFlight returns the request IDs of the invocations in flight, at most
// limit of them, and how many there are: those of the slots, and those of
// the slots replaced while their handlers overrun.
func (rt *Runtime) inFlight(limit int) (ids []string, n int) {
	rt.slotsMu.RLock()
	defer rt.slotsMu.RUnlock()
	add := func(s *slot) {
		if c := s.live.Load(); c != nil {
			n++
			if len(ids) < limit {
				ids = append(ids, c.lc.AwsRequestID)
			}
		}
	}
	for _, s := range rt.slots {
		add(s)
	}
	for _, o := range rt.overruns {
		add(o.s)
	}
	return ids, n
}
