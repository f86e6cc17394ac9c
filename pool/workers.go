package pool

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/panjf2000/ants/v2"
)

// Workers runs long-lived tasks, fn(arg) each on a goroutine of its own, at
// most size at once. Create it with NewWorkers; the zero value is not
// usable. Its methods are safe for concurrent use.
type Workers[T any] struct {
	p       *ants.PoolWithFuncGeneric[T]
	fn      func(T)
	onPanic func(any)
	// stderr receives panics when no WithPanicHandler is set; nil means
	// os.Stderr, read when written to. Tests set it before the first
	// Invoke.
	stderr io.Writer

	mu      sync.Mutex // orders Invoke with restart (which changes the capacity) and Release
	closed  bool       // under mu: Release was called
	once    sync.Once
	stopped chan struct{} // closed when every goroutine of the pool has exited

	afterRestart func() // tests: called by the goroutine a restarted task left
}

// NewWorkers returns a pool that runs fn for each Invoke, at most size at
// once. It starts the pool's clock goroutine: Release it.
func NewWorkers[T any](size int, fn func(T), opts ...Option) (*Workers[T], error) {
	if size < 1 || size > math.MaxInt32-1 {
		return nil, fmt.Errorf("%w: size %d, want 1..%d", errInvalid, size, math.MaxInt32-1)
	}
	if fn == nil {
		return nil, fmt.Errorf("%w: nil function", errInvalid)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	w := &Workers[T]{fn: fn, onPanic: o.onPanic, stopped: make(chan struct{})}
	// A function literal, not the method value w.run: a method value of a
	// generic type costs one more frame on every task's stack, and a task
	// parked for long keeps its frames (concurrent's slots). A task that
	// ends without returning starts again (restart).
	p, err := ants.NewPoolWithFuncGeneric(size, func(arg T) {
		returned := false
		defer func() {
			if !returned {
				w.restart(arg)
			}
		}()
		w.fn(arg)
		returned = true
	},
		ants.WithNonblocking(true),
		// Resident goroutines: a task that ends leaves its goroutine parked
		// for the next Invoke.
		ants.WithDisablePurge(true),
		ants.WithPanicHandler(w.reportPanic),
	)
	if err != nil { // not with the arguments checked above
		return nil, fmt.Errorf("%w: %w", errInvalid, err)
	}
	w.p = p
	return w, nil
}

// Invoke starts fn(arg) on a parked goroutine of the pool, or a new one,
// and returns without waiting for it. When size tasks are running, and
// after Release, it returns an error at once; the task was then not
// started.
func (w *Workers[T]) Invoke(arg T) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	err := w.p.Invoke(arg)
	w.mu.Unlock()
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %d running", errFull, w.p.Running())
}

// restart starts fn(arg) again after it ended without returning (a panic,
// which ants reports next, or runtime.Goexit). ants counts the goroutine
// it leaves until that goroutine's last deferred call, and so the others
// that ended just before and are still leaving: the capacity grows to one
// above all that ants counts for the Invoke (under mu, which every Invoke
// holds, that count cannot grow), and shrinks back at once, so that the
// task gets a fresh goroutine now and the pool runs no more than size
// tasks.
func (w *Workers[T]) restart(arg T) {
	if w.afterRestart != nil {
		defer w.afterRestart()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	size := w.p.Cap()
	w.p.Tune(max(size, w.p.Running()+1))
	err := w.p.Invoke(arg)
	w.p.Tune(size)
	if err != nil {
		fmt.Fprintf(w.errOut(), "pool: a task that ended without returning could not start again: %v\n", err)
	}
}

// Release closes the pool and waits up to timeout for running tasks and
// the pool's goroutines to end. It returns nil once they have, or an error
// saying how many still run; tasks are never interrupted. Every call waits again,
// so a later call with a longer timeout can still see the pool stop.
func (w *Workers[T]) Release(timeout time.Duration) error {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		// ants waits for its goroutines, and for its clock goroutine, only
		// in ReleaseContext and only once; one waiter lets every Release
		// wait.
		go func() {
			_ = w.p.ReleaseContext(context.Background())
			close(w.stopped)
		}()
	})
	select {
	case <-w.stopped:
		return nil
	default:
	}
	if timeout <= 0 {
		return fmt.Errorf("%w: %d goroutines running", errTimeout, w.p.Running())
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.stopped:
		return nil
	case <-t.C:
		return fmt.Errorf("%w after %v: %d goroutines running", errTimeout, timeout, w.p.Running())
	}
}

// reportPanic is the ants panic handler. A panic in the user's callback is
// caught too: nothing that escapes a task may end the process.
func (w *Workers[T]) reportPanic(v any) {
	if w.onPanic == nil {
		fmt.Fprintf(w.errOut(), "pool: task panicked: %v\n%s", v, debug.Stack())
		return
	}
	defer func() {
		if v2 := recover(); v2 != nil {
			fmt.Fprintf(w.errOut(), "pool: panic handler panicked: %v (task panic: %v)\n%s", v2, v, debug.Stack())
		}
	}()
	w.onPanic(v)
}

// errOut is where the pool writes what it cannot hand to anyone.
func (w *Workers[T]) errOut() io.Writer {
	if w.stderr != nil {
		return w.stderr
	}
	return os.Stderr
}
