package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/ants/v2"
)

// headroom multiplies size to get the ants capacity, a hard bound on the
// pool's goroutines. A worker stays counted by ants for a moment after its
// task ended, while it parks itself again (or exits after a panic), and the
// caller may already have its slot back by then. Workers bounds the tasks
// itself; ants only needs room for goroutines in passing.
const headroom = 2

// maxYields bounds how often one Invoke yields the processor for finished
// workers to park before it gives up with ErrFull. It yields only when
// fewer than size tasks run yet all size*headroom goroutines are counted:
// under load on few CPUs, workers waiting to park can sit in the run queue
// behind the caller. BenchmarkInvoke sees about one yield per million
// tasks at size 16 and 256 on 2 CPUs, where ants alone refused the task.
const maxYields = 1000

// Workers runs fn on at most size goroutines at a time. Create it with
// NewWorkers; the zero value is not usable. Its methods are safe for
// concurrent use.
type Workers[T any] struct {
	p        atomic.Pointer[ants.PoolWithFuncGeneric[T]] // nil until the first Invoke
	startMu  sync.Mutex                                  // orders the pool's start with Release
	fn       func(T)
	done     func(T)
	onPanic  func(any)
	size     int64
	preAlloc bool
	// stderr receives panics when no WithPanicHandler is set: os.Stderr,
	// replaced by tests before the first Invoke.
	stderr io.Writer

	busy    atomic.Int64 // tasks admitted and not yet finished
	yields  atomic.Int64 // times Invoke yielded for a worker to park; for benchmarks
	closed  atomic.Bool
	once    sync.Once
	stopped chan struct{} // closed when every pool goroutine has exited
}

// NewWorkers returns a pool that runs fn for each Invoke, at most size at
// once. Worker goroutines start on demand and then stay parked until
// Release, so a steady load starts no goroutine and allocates nothing. A
// pool never invoked starts no goroutine at all, and needs no Release.
func NewWorkers[T any](size int, fn func(T), opts ...Option) (*Workers[T], error) {
	if size < 1 || size > math.MaxInt32/headroom {
		return nil, fmt.Errorf("%w: size %d, want 1..%d", errInvalid, size, math.MaxInt32/headroom)
	}
	if fn == nil {
		return nil, fmt.Errorf("%w: nil function", errInvalid)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	w := &Workers[T]{
		fn:       fn,
		onPanic:  o.onPanic,
		size:     int64(size),
		preAlloc: o.preAlloc,
		stderr:   os.Stderr,
		stopped:  make(chan struct{}),
	}
	if o.done != nil {
		done, ok := o.done.(func(T))
		if !ok {
			return nil, fmt.Errorf("%w: WithDone hook is %T, want %T", errInvalid, o.done, w.done)
		}
		w.done = done
	}
	return w, nil
}

// start returns the ants pool, starting it on first use: ants starts a
// clock goroutine with every pool, which would outlive a Workers that is
// built and dropped without Release. It fails only after Release.
func (w *Workers[T]) start() (*ants.PoolWithFuncGeneric[T], error) {
	if p := w.p.Load(); p != nil {
		return p, nil
	}
	w.startMu.Lock()
	defer w.startMu.Unlock()
	if p := w.p.Load(); p != nil {
		return p, nil
	}
	if w.closed.Load() {
		return nil, errClosed
	}
	p, err := ants.NewPoolWithFuncGeneric(int(w.size)*headroom, w.run,
		ants.WithNonblocking(true),
		// Resident workers: no goroutine churn after an idle spell, and the
		// goroutine count never exceeds the ants capacity.
		ants.WithDisablePurge(true),
		// ants' preallocated ring queue showed no consistent gain over its
		// stack in BenchmarkInvoke (within noise at sizes 1, 16 and 256),
		// and the stack hands the most recently parked, cache-warm
		// goroutine to the next task.
		ants.WithPreAlloc(w.preAlloc),
		ants.WithPanicHandler(w.reportPanic),
	)
	if err != nil { // not with the arguments NewWorkers checked
		return nil, fmt.Errorf("%w: %w", errInvalid, err)
	}
	w.p.Store(p)
	return p, nil
}

// Invoke starts fn(arg) on a free worker and returns without waiting for
// it. It never waits for a task: when size tasks are running it returns
// ErrFull at once, and after Release it returns ErrClosed. (It may yield
// the processor, rarely, for a worker whose task has ended to park; see
// maxYields.) On error the task was not started, the WithDone hook is not
// called and arg stays the caller's.
func (w *Workers[T]) Invoke(arg T) error {
	if w.closed.Load() {
		return errClosed
	}
	// CAS rather than Add: a refused Invoke must not count even briefly,
	// or it could make a concurrent, entitled Invoke fail.
	for {
		n := w.busy.Load()
		if n >= w.size {
			return errFull
		}
		if w.busy.CompareAndSwap(n, n+1) {
			break
		}
	}
	p, err := w.start()
	if err != nil {
		w.busy.Add(-1)
		return err
	}
	for i := 0; ; i++ {
		err := p.Invoke(arg)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ants.ErrPoolOverload) || i == maxYields {
			w.busy.Add(-1)
			if errors.Is(err, ants.ErrPoolClosed) {
				return errClosed
			}
			return errFull
		}
		// Fewer than size tasks run, yet ants has no idle goroutine: the
		// ones whose tasks ended are not parked again yet (under load they
		// can wait in the run queue behind the caller). Let them run.
		w.yields.Add(1)
		runtime.Gosched()
	}
}

// Release closes the pool and waits up to timeout for running tasks and
// the pool's goroutines to end. It returns nil once they have, or an error
// wrapping ErrTimeout; tasks are never interrupted. Every call waits again,
// so a later call with a longer timeout can still see the pool stop.
func (w *Workers[T]) Release(timeout time.Duration) error {
	w.once.Do(func() {
		w.startMu.Lock()
		w.closed.Store(true) // under startMu: no pool starts after it
		p := w.p.Load()
		w.startMu.Unlock()
		if p == nil {
			close(w.stopped) // never started
			return
		}
		// ants waits for its workers, and for its clock goroutine, only in
		// ReleaseContext and only once; one waiter lets every Release wait.
		go func() {
			_ = p.ReleaseContext(context.Background())
			close(w.stopped)
		}()
	})
	select {
	case <-w.stopped:
		return nil
	default:
	}
	if timeout <= 0 {
		return fmt.Errorf("%w: %d tasks running", errTimeout, w.busy.Load())
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.stopped:
		return nil
	case <-t.C:
		return fmt.Errorf("%w after %v: %d tasks running", errTimeout, timeout, w.busy.Load())
	}
}

// run is what ants calls on a worker goroutine.
func (w *Workers[T]) run(arg T) {
	defer w.finish(arg)
	w.fn(arg)
}

// finish runs even when fn panics, so a slot is never lost.
func (w *Workers[T]) finish(arg T) {
	w.busy.Add(-1)
	if w.done != nil {
		w.done(arg)
	}
}

// reportPanic is the ants panic handler. A panic in the user's callback is
// caught too: nothing that escapes a task may end the process.
func (w *Workers[T]) reportPanic(v any) {
	if w.onPanic == nil {
		fmt.Fprintf(w.stderr, "pool: task panicked: %v\n%s", v, debug.Stack())
		return
	}
	defer func() {
		if v2 := recover(); v2 != nil {
			fmt.Fprintf(w.stderr, "pool: panic handler panicked: %v (task panic: %v)\n%s", v2, v, debug.Stack())
		}
	}()
	w.onPanic(v)
}
