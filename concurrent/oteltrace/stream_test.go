package oteltrace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/concurrent/oteltrace"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// answer serves h alone at N=1 and returns its answer to payload.
func answer(t *testing.T, h any, payload []byte) rapitest.Result {
	t.Helper()
	api := serve(t, h, 1)
	h1, _, _ := header(1) // sampled: its span is recorded
	res, err := api.Invoke(t.Context(), rapitest.Request{Payload: payload, TraceID: h1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sameAnswer fails the test unless got, the answer through Wrap, is want,
// the answer of the handler served bare: the same response mode, content
// type, bytes and error.
func sameAnswer(t *testing.T, got, want rapitest.Result) {
	t.Helper()
	if got.ResponseMode != want.ResponseMode || got.ContentType != want.ContentType {
		t.Errorf("through Wrap: mode %q, content type %q; bare: mode %q, content type %q",
			got.ResponseMode, got.ContentType, want.ResponseMode, want.ContentType)
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Errorf("through Wrap: %d bytes %.80q; bare: %d bytes %.80q", len(got.Body), got.Body, len(want.Body), want.Body)
	}
	if (got.Err == nil) != (want.Err == nil) || got.Err != nil && (got.Err.Type != want.Err.Type || got.Err.Trailer != want.Err.Trailer) {
		t.Errorf("through Wrap: error %+v; bare: %+v", got.Err, want.Err)
	}
}

// oneSpan returns the one span exp holds.
func oneSpan(t *testing.T, exp *tracetest.InMemoryExporter) tracetest.SpanStub {
	t.Helper()
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	return spans[0]
}

// TestWrapKeepsHTTPStream: Wrap(lambdahttp.StreamingHandler(mux)) answers
// as lambdahttp.StreamingHandler(mux) does: streamed, with lambdahttp's
// content type, prelude and bytes; the http.Handler writes them while the
// invocation's span is still recording.
func TestWrapKeepsHTTPStream(t *testing.T) {
	var recording, written atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Answer", "42")
		w.WriteHeader(http.StatusCreated)
		for i := range 3 {
			_, _ = fmt.Fprintf(w, "part %d of %s\n", i, r.URL.Path)
			w.(http.Flusher).Flush()
		}
		_, _ = w.Write(bytes.Repeat([]byte("z"), 40<<10)) // past lambdahttp's gathering
		if trace.SpanFromContext(r.Context()).IsRecording() {
			recording.Add(1)
		}
		written.Add(1)
	})
	payload, err := json.Marshal(&events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: "/hello",
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/hello"}},
	})
	if err != nil {
		t.Fatal(err)
	}

	want := answer(t, lambdahttp.StreamingHandler(mux), payload)
	if want.ResponseMode != rapitest.ResponseModeStreaming || want.ContentType != lambdahttp.StreamContentType ||
		!bytes.Contains(want.Body, []byte("}\x00\x00\x00\x00\x00\x00\x00\x00part 0 of /hello\n")) {
		t.Fatalf("bare: mode %q, content type %q, body %.80q: not lambdahttp's stream", want.ResponseMode, want.ContentType, want.Body)
	}
	tp, exp := recorder(t)
	got := answer(t, oteltrace.Wrap(lambdahttp.StreamingHandler(mux), oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup)), payload)
	sameAnswer(t, got, want)
	if s := oneSpan(t, exp); s.Status.Code == codes.Error {
		t.Errorf("span status %v %q, want no error", s.Status.Code, s.Status.Description)
	}
	if written.Load() != 2 || recording.Load() != 1 {
		t.Errorf("the http.Handler ran %d times, %d of them within a recording span; want 2 and 1", written.Load(), recording.Load())
	}
}

// ctReader is a reader with a content type of its own.
type ctReader struct{ r io.Reader }

func (c ctReader) Read(p []byte) (int, error) { return c.r.Read(p) }
func (ctReader) ContentType() string          { return "text/csv" }

// failingReader gives its bytes, then an error.
type failingReader struct{ r io.Reader }

var errMidway = errors.New("the source went away")

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errMidway
	}
	return n, err
}

// bytesHandler is a lambda.Handler that answers bytes that are not JSON.
type bytesHandler struct{}

func (bytesHandler) Invoke(context.Context, []byte) ([]byte, error) { return []byte("\x00raw"), nil }

// TestWrapKeepsAnswerForm: through Wrap, each answer goes out as it does
// without it, in the same response mode with the same content type: a
// reader result streamed (read to its end within the span), anything else
// buffered. A stream's error fails its span.
func TestWrapKeepsAnswerForm(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 8<<10) // several chunks
	tests := []struct {
		name     string
		handler  func() any // a new one for each run
		streamed bool
		fails    bool
	}{
		{"strings.Reader", func() any {
			return func() (io.Reader, error) { return strings.NewReader(long), nil }
		}, true, false},
		{"bytes.Reader", func() any {
			return func() (io.Reader, error) { return bytes.NewReader([]byte(long)), nil }
		}, true, false},
		{"reader with a content type", func() any {
			return func() (io.Reader, error) { return ctReader{strings.NewReader("a,b\n1,2\n")}, nil }
		}, true, false},
		{"reader failing midway", func() any {
			return func() (io.Reader, error) { return &failingReader{strings.NewReader(long)}, nil }
		}, true, true},
		{"typed", func() any {
			return func(_ context.Context, s string) (string, error) { return s + "!", nil }
		}, false, false},
		{"lambda.Handler bytes", func() any { return bytesHandler{} }, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := []byte(`"hi"`)
			want := answer(t, tt.handler(), payload)
			if streamed := want.ResponseMode == rapitest.ResponseModeStreaming; streamed != tt.streamed || (want.Err != nil) != tt.fails {
				t.Fatalf("bare: mode %q, error %+v; want streamed %v, failed %v", want.ResponseMode, want.Err, tt.streamed, tt.fails)
			}
			tp, exp := recorder(t)
			got := answer(t, oteltrace.Wrap(tt.handler(), oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup)), payload)
			sameAnswer(t, got, want)
			if s := oneSpan(t, exp); (s.Status.Code == codes.Error) != tt.fails {
				t.Errorf("span status %v %q, want failed %v", s.Status.Code, s.Status.Description, tt.fails)
			}
		})
	}
}

// endless is a reader that does not end: it gives stop bytes (several
// bounds, so that an unbounded read fails the test rather than the
// machine's memory), then an error. read counts what it gave.
type endless struct {
	stop   int64
	read   atomic.Int64 // read by the test while the runtime may read on
	closed atomic.Int32
}

var errStopped = errors.New("the endless reader was read past the test's stop")

func (e *endless) Read(p []byte) (int, error) {
	read := e.read.Load()
	if read >= e.stop {
		return 0, errStopped
	}
	n := min(int64(len(p)), e.stop-read)
	for i := range p[:n] {
		p[i] = 'x'
	}
	e.read.Add(n)
	return int(n), nil
}

func (e *endless) Close() error { e.closed.Add(1); return nil }

// invokeBound is what concurrent.NewHandler's Invoke reads of a reader at
// most: 6 MiB, the default LMIGO_MAX_RESPONSE_BYTES.
const invokeBound = 6 << 20

// TestWrapInvokeBoundsEndlessReader: Invoke, which returns bytes, reads a
// reader that does not end up to a bound and a chunk, then fails with
// concurrent.ErrResponseTooLarge, and so does its span.
func TestWrapInvokeBoundsEndlessReader(t *testing.T) {
	tp, exp := recorder(t)
	r := &endless{stop: 4 * invokeBound}
	h := oteltrace.Wrap(func() (io.Reader, error) { return r, nil }, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup))
	b, err := h.Invoke(t.Context(), []byte(`{}`))
	if read := r.read.Load(); read > invokeBound+64<<10 {
		t.Errorf("Invoke read %d bytes of the reader, more than the bound %d and a chunk", read, invokeBound)
	}
	if !errors.Is(err, concurrent.ErrResponseTooLarge) || b != nil {
		t.Errorf("Invoke: %d bytes, %v; want no bytes and concurrent.ErrResponseTooLarge", len(b), err)
	}
	if s := oneSpan(t, exp); s.Status.Code != codes.Error {
		t.Errorf("span status %v, want Error", s.Status.Code)
	}
}

// TestWrapStreamsEndlessReader: served by the runtime, a reader that does
// not end is streamed through Wrap as it is read, not gathered first: the
// fake Runtime API gets more than its bound of it and refuses the
// response (413), the runtime closes the reader, and the span ends with an
// error. The slot then serves the next invocation.
func TestWrapStreamsEndlessReader(t *testing.T) {
	tp, exp := recorder(t)
	var current atomic.Pointer[endless]
	h := oteltrace.Wrap(func() (io.Reader, error) { return current.Load(), nil },
		oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup))
	api := serve(t, h, 1)

	r := &endless{stop: 5 * rapitest.DefaultMaxResponseBytes}
	current.Store(r)
	h1, _, _ := header(1)
	res, err := api.Invoke(t.Context(), rapitest.Request{Payload: []byte(`{}`), TraceID: h1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil || res.Err.Type != rapitest.ErrorTypeTooLarge || api.Stats().Oversized != 1 {
		t.Fatalf("answer %+v, %d responses refused as too large; want the Runtime API's 413 for a stream over its bound", res.Err, api.Stats().Oversized)
	}

	// At N=1 the next answer comes once the first invocation is over.
	small := &endless{stop: 10}
	current.Store(small)
	// small ends in errStopped: the second invocation's stream fails too,
	// after its first bytes.
	h2, _, _ := header(2)
	res, err = api.Invoke(t.Context(), rapitest.Request{Payload: []byte(`{}`), TraceID: h2})
	if err != nil || res.ResponseMode != rapitest.ResponseModeStreaming || string(res.Body) != "xxxxxxxxxx" {
		t.Fatalf("next invocation: %v, mode %q, body %q", err, res.ResponseMode, res.Body)
	}
	if read := r.read.Load(); read <= rapitest.DefaultMaxResponseBytes || read >= r.stop {
		t.Errorf("the reader gave %d bytes; want more than the Runtime API's bound %d, and less than all %d", read, rapitest.DefaultMaxResponseBytes, r.stop)
	}
	if r.closed.Load() != 1 {
		t.Errorf("the endless reader was closed %d times, want once", r.closed.Load())
	}
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Status.Code != codes.Error || spans[1].Status.Code != codes.Error {
		t.Fatalf("%d spans, want 2, both ended as failed", len(spans))
	}
}
