package concurrent

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// extensionName is the name of the internal extension that enables SIGTERM.
const extensionName = "lmigo"

// registerTimeout bounds the registration, which the Runtime API answers at
// once.
const registerTimeout = 2 * time.Second

// WithSIGTERM registers an internal extension during init, as
// LMIGO_SIGTERM=1 does, so that Lambda sends SIGTERM before it shuts the
// environment down; without one the process gets SIGKILL. The hooks run
// when Run stops, as lambda.WithEnableSIGTERM's do: once each, in order,
// after the drain, in the last fifth of LMIGO_SHUTDOWN_TIMEOUT. A hook
// that panics or overruns its share is logged, and the next one runs.
// docs/design.md, "Shutdown and SIGTERM", has the rest.
func WithSIGTERM(hooks ...func()) Option {
	return func(o *options) {
		o.sigterm = true
		o.hooks = append(o.hooks, hooks...)
	}
}

// hookShare is the part of the shutdown budget kept for the hooks.
const hookShare = 5 // one fifth

// runHooks runs the shutdown hooks in order, each within an equal share of
// the time left before deadline.
func (rt *Runtime) runHooks(deadline time.Time) {
	for i, hook := range rt.opts.hooks {
		share := time.Until(deadline) / time.Duration(len(rt.opts.hooks)-i)
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			hook()
		}()
		t := time.NewTimer(max(share, 0))
		select {
		case v := <-done:
			if v != nil {
				rt.log.Error("shutdown hook panicked", zap.Int("hook", i), zap.Error(newPanicError(v)))
			}
		case <-t.C:
			rt.log.Warn("shutdown hook did not return within its share of the shutdown budget",
				zap.Int("hook", i), zap.Duration("share", share))
		}
		t.Stop()
	}
}

// enableSIGTERM registers the internal extension when WithSIGTERM or
// LMIGO_SIGTERM asks for it; stop ends its event poll.
func (rt *Runtime) enableSIGTERM() (stop func()) {
	if !rt.opts.sigterm && !rt.cfg.SIGTERM {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), registerTimeout)
	id, err := rt.client.RegisterExtension(ctx, extensionName)
	cancel()
	if err != nil {
		rt.log.Warn("cannot register the internal extension: Lambda will not send SIGTERM", zap.Error(err))
		return func() {}
	}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := rt.client.AwaitExtensionEvent(ctx, id)
		if ctx.Err() == nil {
			rt.log.Warn("the internal extension's event poll ended", zap.Error(err))
		}
	}()
	rt.log.Debug("internal extension registered: Lambda sends SIGTERM before shutdown",
		zap.String("extensionName", extensionName))
	return func() {
		cancel()
		<-done
	}
}
