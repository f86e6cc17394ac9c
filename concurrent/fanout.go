package concurrent

import (
	"context"
	"errors"
	"runtime/pprof"
	"sync"

	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"go.uber.org/zap"
)

// What an invocation starts beside its answer: work started with Go, and
// the metrics recorded with package concurrent/metrics. Both end once the
// handler has returned, before the answer is posted (Runtime.finish,
// end.go). So the answer counts the work's failures, and the invocation's
// documents are in the log before its caller has the response. An
// invocation that starts nothing pays one uncontended lock. Work started
// with GoDetached is not waited for, and is named so in its labels.

// maxWork bounds the goroutines Go runs at once for one invocation. A
// fan-out loop cannot make more, whatever its length. The slots' pool is
// not used: its goroutines are the slots, which polls must never lack.
const maxWork = 64

// errWorkExited stands for work that ended with runtime.Goexit.
var errWorkExited = errors.New("concurrent: fan-out work called runtime.Goexit")

// invocationExt is an invocation's work and metrics.
type invocationExt struct {
	mu      sync.Mutex
	ended   bool // waited for and written: nothing more is taken
	metrics *emf.Set
	running int
	idle    chan struct{} // closed when running drops to 0
	sem     chan struct{} // maxWork places
	err     error         // the first error or panic not taken by Wait
	panic   *PanicError   // the first panic: the invocation fails with it
}

// endedExt is the ext of an invocation that ended without one.
var endedExt = &invocationExt{ended: true}

// Go runs f on a goroutine of its own, as part of the invocation ctx
// belongs to. The invocation is answered only once every f has returned,
// so nothing Go starts outlives it. A panic in f fails that invocation
// alone, as a handler's panic does, and is logged with its request ID.
// The first error is returned by [Wait]; one no Wait took fails the
// invocation.
//
// At most 64 run at once per invocation, so a loop cannot start more:
// past that, Go waits for a place or for ctx to end. After the answer it
// returns [ErrLateWork] and f does not run. Outside an invocation Go runs
// f at once and returns its error, a panic as a *[PanicError].
func Go(ctx context.Context, f func(context.Context) error) error {
	c := fromContext(ctx)
	if c == nil {
		return runWork(ctx, f)
	}
	return c.extension().start(ctx, c, f)
}

// Wait waits for every function [Go] started for the invocation ctx
// belongs to, and returns the first error or panic (a *[PanicError]) that
// no Wait returned before. A panic fails the invocation even so. It must
// not be called from such a function, which would wait for itself.
// Outside an invocation it returns nil.
func Wait(ctx context.Context) error {
	c := fromContext(ctx)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	x := c.ext
	c.mu.Unlock()
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.waitLocked()
	err := x.err
	x.err = nil
	return err
}

// GoDetached runs f on a goroutine that may outlive the invocation ctx
// belongs to: the answer does not wait for it. f's context keeps ctx's
// values but is never cancelled. A panic in f is logged and ends nothing.
// Nothing bounds or waits for it, the shutdown included: prefer [Go].
// Its goroutine carries the invocation's profiler labels and detached:
// "true", so it is never counted among the goroutines that outlived their
// invocation (docs/observability.md).
func GoDetached(ctx context.Context, f func(context.Context)) {
	ctx, detached := detach(context.WithoutCancel(ctx))
	log := Logger(ctx)
	var named chan struct{}
	if detached {
		named = make(chan struct{})
	}
	go func() {
		if named != nil {
			// Before GoDetached returns: no look sees this goroutine
			// under its invocation's labels alone, as left over.
			pprof.SetGoroutineLabels(ctx)
			close(named)
		}
		defer func() {
			if v := recover(); v != nil {
				logWorkPanic(log, "detached work panicked", newPanicError(v))
			}
		}()
		f(ctx)
	}()
	if named != nil {
		<-named
	}
}

func (x *invocationExt) start(ctx context.Context, c *invocationContext, f func(context.Context) error) error {
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		return ErrLateWork
	}
	if x.sem == nil {
		x.sem = make(chan struct{}, maxWork)
	}
	sem := x.sem
	x.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		<-sem
		return ErrLateWork
	}
	if x.running == 0 {
		x.idle = make(chan struct{})
	}
	x.running++
	x.mu.Unlock()
	go x.run(ctx, c, f)
	return nil
}

func (x *invocationExt) run(ctx context.Context, c *invocationContext, f func(context.Context) error) {
	err := errWorkExited // unless f returns
	defer func() {
		// Waited for from here on: it no longer carries the invocation's
		// labels (it inherited them), so no look counts it as left over.
		pprof.SetGoroutineLabels(context.Background())
		x.done(c, err)
	}()
	err = runWork(ctx, f)
}

// runWork runs f, its panic returned as a *PanicError.
func runWork(ctx context.Context, f func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(v)
		}
	}()
	return f(ctx)
}

func (x *invocationExt) done(c *invocationContext, err error) {
	var extra *PanicError // a panic that will not be the answer
	x.mu.Lock()
	if err != nil {
		if pe, ok := err.(*PanicError); ok { //nolint:errorlint // runWork returns it unwrapped
			if x.panic == nil {
				x.panic = pe
			} else {
				extra = pe
			}
		}
		if x.err == nil {
			x.err = err
		}
	}
	x.running--
	if x.running == 0 {
		close(x.idle)
	}
	sem := x.sem
	x.mu.Unlock()
	<-sem
	if extra != nil {
		logWorkPanic(c.zapLogger(), "fan-out work panicked", extra)
	}
}

// waitLocked waits, with x.mu held and released meanwhile, until no work
// runs.
func (x *invocationExt) waitLocked() {
	for x.running > 0 {
		idle := x.idle
		x.mu.Unlock()
		<-idle
		x.mu.Lock()
	}
}

// workFailedAfterStream logs the failure of an invocation's work that
// came after its stream. Work waited for when the reader ended
// (guardedReader) went in the trailers. This one can no longer change the
// answer.
func workFailedAfterStream(c *invocationContext, err error) {
	c.zapLogger().Error("fan-out work failed after the response was streamed", zap.String("errorMessage", logMessage(err)))
}

func logWorkPanic(log *zap.Logger, msg string, pe *PanicError) {
	body := panicBody(pe)
	log.Error(msg, zap.String("errorType", body.Type), zap.String("errorMessage", body.Message),
		zap.Array("stackTrace", stackFrames(body.StackTrace)))
}
