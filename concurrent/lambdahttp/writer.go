package lambdahttp

import (
	"context"
	"io"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

// pooledWriter is what a responseWriter stands for: buffered or
// streamWriter, both pooled.
type pooledWriter interface {
	http.ResponseWriter
	FlushError() error
}

// responseWriter is the http.ResponseWriter a handler gets: one of its
// own per invocation, never pooled, over a pooled writer that it lets go
// of when ServeHTTP returns (end). A handler's goroutine may keep it; its
// late calls never reach the pooled writer, which serves another
// invocation by then: Write and FlushError return io.ErrClosedPipe, as
// lambdaurl's writer does once its handler returned, Header returns a map
// that goes nowhere, WriteHeader and Flush do nothing. The lock orders a
// stray goroutine's call with end.
type responseWriter struct {
	mu sync.Mutex
	w  pooledWriter // nil once the invocation ended
}

// end cuts the handler off from the pooled writer.
func (r *responseWriter) end() {
	r.mu.Lock()
	r.w = nil
	r.mu.Unlock()
}

func (r *responseWriter) Header() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return http.Header{}
	}
	return r.w.Header()
}

func (r *responseWriter) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		r.w.WriteHeader(code)
	}
}

func (r *responseWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return 0, io.ErrClosedPipe
	}
	return r.w.Write(p)
}

// Flush sends the head and what was written, streamed; buffered, it does
// nothing: the answer leaves when the handler returns.
func (r *responseWriter) Flush() { _ = r.FlushError() }

// FlushError is Flush for http.ResponseController.
func (r *responseWriter) FlushError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return io.ErrClosedPipe
	}
	return r.w.FlushError()
}

// panicMessage is the body of the 500 answered for a panic.
const panicMessage = "Internal Server Error"

// logPanic reports a recovered panic at ERROR on the invocation's logger.
// http.ErrAbortHandler is the handler's way to abort: no stack for it.
func logPanic(ctx context.Context, v any) {
	l := concurrent.Logger(ctx)
	if v == http.ErrAbortHandler { //nolint:errorlint // the sentinel itself is what is panicked
		l.Warn("http handler aborted the response")
		return
	}
	l.Error("http handler panicked", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
}
