package lambdahttp

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

// retainBytes bounds the body buffer a pooled writer keeps between
// invocations, so that memory after a burst of large answers stays bounded.
const retainBytes = 2 << 20

// buffered is the writer of a buffered invocation, behind the handler's
// responseWriter. It holds the body; the head is encoded from the header
// map as it is when the handler returns.
type buffered struct {
	opts   *options
	door   door
	limit  int // of the answer to door
	header http.Header
	status int
	body   []byte
	over   bool // a Write was refused: the body would not fit the answer
	failed bool // the answer was replaced (fail)
}

var bufferedPool = sync.Pool{New: func() any { return new(buffered) }}

func getBuffered(o *options, d door) *buffered {
	w := bufferedPool.Get().(*buffered)
	w.opts, w.door, w.limit, w.header = o, d, o.maxAnswer(d), make(http.Header)
	return w
}

// maxAnswer is the bound of a buffered answer to door d.
func (o *options) maxAnswer(d door) int {
	if d.alb() && !o.maxResponseSet {
		return DefaultMaxALBResponseBytes
	}
	return o.maxResponse
}

func putBuffered(w *buffered) {
	body := w.body[:0]
	if cap(body) > retainBytes {
		body = nil
	}
	*w = buffered{body: body}
	bufferedPool.Put(w)
}

func (w *buffered) Header() http.Header { return w.header }

// WriteHeader records the first final status code; 1xx codes cannot be
// sent through the platform and are ignored.
func (w *buffered) WriteHeader(code int) {
	checkStatus(code)
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *buffered) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.over || len(w.body)+len(p) > w.limit {
		w.over = true
		return 0, fmt.Errorf("%w of %d bytes", ErrResponseTooLarge, w.limit)
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

// FlushError does nothing: a buffered answer leaves when the handler
// returns.
func (w *buffered) FlushError() error { return nil }

// serve runs h, turning a panic into a 500. h writes through a
// responseWriter of its own, ended when h returns, however it returns.
func (w *buffered) serve(ctx context.Context, h http.Handler, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			logPanic(ctx, v)
			w.fail(http.StatusInternalServerError, panicMessage)
		}
	}()
	rw := &responseWriter{w: w}
	defer rw.end() // first: a stray goroutine's call never meets fail or encode
	h.ServeHTTP(rw, r)
}

// fail replaces whatever the handler did with a plain-text answer.
func (w *buffered) fail(status int, msg string) {
	w.header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	w.status, w.body, w.over, w.failed = status, append(w.body[:0], msg...), false, true
}

// encode writes the answer, in the shape the door reads, into out, or a
// 500 when it would exceed the limits.
func (w *buffered) encode(ctx context.Context, out *concurrent.Buffer) {
	if w.over {
		w.tooLarge(ctx, fmt.Sprintf("body over %d bytes", w.limit))
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if _, ok := w.header["Content-Type"]; !ok && len(w.body) > 0 {
		w.header.Set("Content-Type", http.DetectContentType(w.body))
	}
	start := len(out.B)
	out.B = append(out.B, '{')
	switch {
	case w.door.v1():
		out.B = appendHeadV1(out.B, w.status, w.header, false)
	case w.door.alb():
		out.B = appendHeadALB(out.B, w.status, w.header, w.door == doorALBMulti)
	default:
		out.B = appendHead(out.B, w.status, w.header)
	}
	if len(out.B)-start > w.opts.maxHeader && !w.failed { // a failure's own head is always sent
		n := len(out.B) - start
		out.B = out.B[:start]
		concurrent.Logger(ctx).Error("http response headers over the limit",
			zap.Int("limit", w.opts.maxHeader), zap.Int("bytes", n))
		w.fail(http.StatusInternalServerError, fmt.Sprintf("%v of %d bytes", ErrHeaderTooLarge, w.opts.maxHeader))
		w.encode(ctx, out)
		return
	}
	b64 := false
	if len(w.body) > 0 {
		out.B = append(out.B, `,"body":"`...)
		if w.opts.text(w.header.Get("Content-Type"), w.header.Get("Content-Encoding")) && utf8.Valid(w.body) {
			out.B = slices.Grow(out.B, len(w.body)+len(w.body)/16+32)
			out.B = appendStringBody(out.B, w.body, false)
			out.B = append(out.B, '"')
		} else {
			out.B = base64.StdEncoding.AppendEncode(out.B, w.body)
			out.B = append(out.B, `","isBase64Encoded":true`...)
			b64 = true
		}
	}
	if !b64 && w.door.alb() { // the load balancer requires the member
		out.B = append(out.B, `,"isBase64Encoded":false`...)
	}
	out.B = append(out.B, '}')
	if len(out.B)-start > w.limit && !w.failed {
		n := len(out.B) - start
		out.B = out.B[:start]
		w.tooLarge(ctx, "answer of "+strconv.Itoa(n)+" bytes once encoded")
		w.encode(ctx, out)
	}
}

// tooLarge replaces an answer that cannot be posted with a 500 that says
// why, and logs it.
func (w *buffered) tooLarge(ctx context.Context, what string) {
	msg := fmt.Sprintf("%v: %s, the limit is %d bytes; stream large bodies (lambdahttp.StreamingHandler)",
		ErrResponseTooLarge, what, w.limit)
	concurrent.Logger(ctx).Error(msg)
	w.fail(http.StatusInternalServerError, msg)
}

// checkStatus panics on a status code that cannot be sent, as net/http
// does; the panic becomes a 500.
func checkStatus(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("lambdahttp: invalid WriteHeader code %d", code))
	}
}
