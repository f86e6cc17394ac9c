package lambdahttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"

	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

// Gathering of small writes: a Write under directWrite bytes is copied
// into a buffer of gatherBytes, sent when full, on Flush and at the end; a
// larger one goes out as it is, in one chunk.
const (
	gatherBytes = 16 << 10
	directWrite = 4 << 10
)

// preludeEnd separates the JSON head from the body of a streamed answer.
var preludeEnd = [8]byte{}

// streamer is the concurrent.StreamInvoker StreamingHandler returns.
type streamer struct {
	opts options
	h    http.Handler
}

// InvokeStream decodes the event of payload (which it does not keep) and
// returns the stream that serves it, or, for a door that does not stream,
// the buffered answer.
func (s *streamer) InvokeStream(ctx context.Context, payload []byte) (contentType string, out []byte, body io.Reader, err error) {
	ev, err := decodeEvent(payload)
	if err != nil {
		return "", nil, nil, err
	}
	if !ev.streamed() {
		var b concurrent.Buffer
		serveBuffered(ctx, &s.opts, s.h, ev, &b)
		return jsonContentType, b.B, nil, nil
	}
	r, err := newRequest(ctx, ev)
	return StreamContentType, nil, &stream{opts: &s.opts, h: s.h, ctx: ctx, door: ev.door, req: r, reqErr: err}, nil
}

// Invoke is InvokeStream with the stream read whole, through Read: at most
// WithMaxResponseBytes of it.
func (s *streamer) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	_, out, body, err := s.InvokeStream(ctx, payload)
	if err != nil || body == nil {
		return out, err
	}
	return io.ReadAll(struct{ io.Reader }{body}) // Read, not WriteTo
}

// jsonContentType is the content type of a buffered answer.
const jsonContentType = "application/json"

// stream is the reader a StreamingHandler returns. The runtime streams
// it through WriteTo, which runs the http.Handler on the runtime's worker,
// within the invocation. Read, for a caller that only reads, runs it into
// a buffer of at most maxResponse bytes on the first call. It is used once.
type stream struct {
	opts   *options
	door   door // the prelude's format: REST (1.0) or else 2.0
	h      http.Handler
	ctx    context.Context
	req    *http.Request
	reqErr error

	ran  bool
	rw   responseWriter // the handler's, over the pooled streamWriter
	rest *bytes.Reader  // Read: what WriteTo produced
	err  error          // Read: the error after rest
}

// MarshalJSON fails so that the runtime sends the stream's bytes, not JSON.
func (s *stream) MarshalJSON() ([]byte, error) {
	return nil, errors.New("lambdahttp: a stream is not JSON")
}

// ContentType is the content type the runtime posts the stream with.
func (s *stream) ContentType() string { return StreamContentType }

func (s *stream) Read(p []byte) (int, error) {
	if !s.ran {
		var b bytes.Buffer
		_, s.err = s.WriteTo(&cappedWriter{w: &b, room: s.opts.maxResponse})
		s.rest = bytes.NewReader(b.Bytes())
	}
	if s.rest.Len() > 0 {
		return s.rest.Read(p)
	}
	if s.err != nil {
		return 0, s.err
	}
	return 0, io.EOF
}

// WriteTo writes the prelude and the body to dst as the handler writes
// them. A panic before the first byte reached dst answers 500; after it,
// WriteTo returns the panic as a *concurrent.PanicError, which the runtime
// sends in the stream's error trailers.
func (s *stream) WriteTo(dst io.Writer) (n int64, err error) {
	if s.ran {
		return 0, errors.New("lambdahttp: the stream was already read")
	}
	s.ran = true
	w := getStreamWriter(s.opts, s.door, dst)
	defer putStreamWriter(w)
	if s.reqErr != nil {
		w.fail(requestStatus(s.reqErr), s.reqErr.Error())
		return w.finish()
	}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		logPanic(s.ctx, v)
		if w.n == 0 {
			w.fail(http.StatusInternalServerError, panicMessage)
			n, err = w.finish()
			return
		}
		_, _ = w.finish() // what the handler wrote before, then the trailers
		n, err = w.n, newPanicError(v)
	}()
	s.rw.w = w
	defer s.rw.end() // a panic or Goexit: before w finishes or goes back to the pool
	s.h.ServeHTTP(&s.rw, s.req)
	s.rw.end()
	if w.headErr != nil {
		concurrent.Logger(s.ctx).Error("http response headers over the limit", zap.Int("limit", s.opts.maxHeader))
	}
	return w.finish()
}

func newPanicError(v any) *concurrent.PanicError {
	var pcs [40]uintptr
	k := runtime.Callers(3, pcs[:])
	return &concurrent.PanicError{Value: v, Stack: append([]uintptr(nil), pcs[:k]...)}
}

// streamWriter is the writer of a streamed invocation, behind the
// handler's responseWriter.
type streamWriter struct {
	opts    *options
	door    door
	dst     io.Writer
	header  http.Header
	status  int
	headed  bool   // the prelude is in buf or sent
	headErr error  // the head was over the limit: a 500 went instead
	buf     []byte // prelude and small writes not yet sent
	n       int64  // bytes written to dst
	err     error  // dst's first error; every later write returns it
}

var streamPool = sync.Pool{New: func() any { return &streamWriter{buf: make([]byte, 0, gatherBytes)} }}

func getStreamWriter(o *options, d door, dst io.Writer) *streamWriter {
	w := streamPool.Get().(*streamWriter)
	w.opts, w.door, w.dst, w.header = o, d, dst, make(http.Header)
	return w
}

func putStreamWriter(w *streamWriter) {
	buf := w.buf[:0]
	if cap(buf) > gatherBytes {
		buf = make([]byte, 0, gatherBytes)
	}
	*w = streamWriter{buf: buf}
	streamPool.Put(w)
}

func (w *streamWriter) Header() http.Header { return w.header }

// WriteHeader records the first final status code; the prelude goes with
// the first body bytes, the first Flush or the end of the handler, as
// net/http sends its header.
func (w *streamWriter) WriteHeader(code int) {
	checkStatus(code)
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.head()
	if w.headErr != nil {
		return 0, w.headErr
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(p) < directWrite && len(w.buf)+len(p) <= cap(w.buf) {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if len(p) < directWrite {
		w.send()
		w.buf = append(w.buf, p...)
		return len(p), w.err
	}
	w.send()
	if w.err != nil {
		return 0, w.err
	}
	k, err := w.dst.Write(p)
	w.n += int64(k)
	w.err = err
	return k, err
}

// FlushError sends the prelude and what was written.
func (w *streamWriter) FlushError() error {
	w.head()
	w.send()
	return w.err
}

// head puts the prelude in buf once: the JSON head, then eight NUL bytes.
// A head over the limit is replaced with a 500 and the body dropped.
func (w *streamWriter) head() {
	if w.headed {
		return
	}
	w.headed = true
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.buf = w.appendPrelude(w.buf[:0], w.status, w.header)
	if len(w.buf) > w.opts.maxHeader {
		w.headErr = fmt.Errorf("%w of %d bytes", ErrHeaderTooLarge, w.opts.maxHeader)
		w.writeFail(http.StatusInternalServerError, w.headErr.Error())
		return
	}
	w.buf = append(w.buf, preludeEnd[:]...)
}

// appendPrelude appends the JSON head of the door's stream: a REST API's
// (as events.APIGatewayProxyStreamingResponse writes it) or a Function
// URL's (as lambdaurl does).
func (w *streamWriter) appendPrelude(dst []byte, status int, h http.Header) []byte {
	dst = append(dst, '{')
	if w.door == doorREST {
		dst = appendHeadV1(dst, status, h, true)
	} else {
		dst = appendHead(dst, status, h)
	}
	return append(dst, '}')
}

// fail answers status with msg as plain text instead of what the handler
// did, which must not have reached dst.
func (w *streamWriter) fail(status int, msg string) {
	w.headed, w.headErr = true, nil
	w.writeFail(status, msg)
}

func (w *streamWriter) writeFail(status int, msg string) {
	w.buf = w.appendPrelude(w.buf[:0], status, http.Header{"Content-Type": {"text/plain; charset=utf-8"}})
	w.buf = append(w.buf, preludeEnd[:]...)
	w.buf = append(w.buf, msg...)
}

func (w *streamWriter) send() {
	if len(w.buf) == 0 || w.err != nil {
		return
	}
	k, err := w.dst.Write(w.buf)
	w.n += int64(k)
	w.err = err
	w.buf = w.buf[:0]
}

// finish sends the prelude, if the handler wrote nothing, and what is left.
func (w *streamWriter) finish() (int64, error) {
	w.head()
	w.send()
	return w.n, w.err
}
