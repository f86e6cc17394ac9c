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

// WithSIGTERM makes the runtime register an internal extension during init,
// as LMIGO_SIGTERM=1 does. Lambda sends the runtime SIGTERM before it shuts
// an execution environment down only when an extension is registered;
// without one the process gets SIGKILL and invocations still in flight are
// lost without a word. Start turns SIGTERM into a graceful shutdown; a
// program that calls Run itself cancels Run's context on SIGTERM.
//
// The extension subscribes to no event. It is registered before the first
// /next, and its GET /extension/event/next, which the Runtime API needs
// before it counts init complete and which never returns, is held open on a
// connection of its own for the life of the runtime. If the registration
// fails, the runtime logs a warning and runs without SIGTERM.
func WithSIGTERM() Option {
	return func(o *options) { o.sigterm = true }
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
