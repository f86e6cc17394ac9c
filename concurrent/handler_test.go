package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/handlertrace"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

type htNamedRaw func(context.Context, []byte, *Buffer) error

type htNotContext interface{ Done() <-chan struct{} }

type htBigContext interface {
	context.Context
	Extra()
}

type htStruct struct{}

func TestNewHandlerInvalid(t *testing.T) {
	var nilFunc func(context.Context) error
	var nilRaw RawHandler
	var nilInvoker *htCountingInvoker
	tests := []struct {
		name    string
		handler any
		want    string
		aws     bool // aws-lambda-go reports the same handler as invalid when invoked
	}{
		{"nil", nil, "handler is nil", true},
		{"nil func", nilFunc, "handler is a nil func(context.Context) error", false},
		{"nil RawHandler", nilRaw, "nil RawHandler", false},
		{"nil lambda.Handler", nilInvoker, "nil *concurrent.htCountingInvoker", false},
		{"int", 42, "handler kind int is not func", true},
		{"struct", htStruct{}, "handler kind struct is not func", true},
		{"three args", func(context.Context, int, int) error { return nil }, "may not take more than two arguments, but takes 3", true},
		{"two args, first not context", func(int, int) error { return nil }, "the first is not context.Context: int", true},
		{"two args, first an other interface", func(htNotContext, int) {}, "the first is not context.Context", true},
		{"one interface arg, not context", func(htNotContext) {}, "takes an interface, but it is not context.Context", true},
		{"one interface arg, more than context", func(htBigContext) {}, "takes an interface, but it is not context.Context", true},
		{"two returns, second not error", func() (int, int) { return 0, 0 }, "the second, int, does not implement error", true},
		{"one return, not error", func() int { return 0 }, "returns a single value, but int does not implement error", true},
		{"three returns", func() (int, int, error) { return 0, 0, nil }, "may not return more than two values, but returns 3", true},
		{"raw-like with int", func(context.Context, []byte, int) error { return nil }, "more than two arguments", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := newHandler(tt.handler, handlerConfig{})
			if err == nil {
				t.Fatalf("newHandler accepted %T (path %v)", tt.handler, h.path)
			}
			if !errors.Is(err, ErrInvalidHandler) {
				t.Errorf("error %v does not wrap ErrInvalidHandler", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if tt.aws {
				if _, awsErr := lambda.NewHandler(tt.handler).Invoke(context.Background(), []byte(`{}`)); awsErr == nil {
					t.Errorf("aws-lambda-go accepts %T", tt.handler)
				}
			}
		})
	}
}

func TestRawHandler(t *testing.T) {
	reverse := func(_ context.Context, payload []byte, out *Buffer) error {
		for i := len(payload) - 1; i >= 0; i-- {
			out.B = append(out.B, payload[i])
		}
		if bytes.Equal(payload, []byte("fail")) {
			return compatValueError{"raw failed"}
		}
		return nil
	}
	forms := []struct {
		name string
		h    any
	}{
		{"RawHandler", RawHandler(reverse)},
		{"func", reverse},
		{"named type", htNamedRaw(reverse)},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			h, err := newHandler(f.h, handlerConfig{escapeHTML: true, indent: "  "})
			if err != nil {
				t.Fatal(err)
			}
			if h.path != pathRaw {
				t.Fatalf("path %v, want raw", h.path)
			}
			out := new(Buffer)
			ct, err := h.call(context.Background(), []byte(`{"<&>"}`), out)
			if err != nil || ct != jsonContentType || out.String() != `}">&<"{` {
				t.Errorf("call = %q, %q, %v", out.B, ct, err)
			}
			out.Reset()
			ct, err = h.call(context.Background(), []byte("fail"), out)
			if !errors.As(err, new(compatValueError)) || ct != "" || out.Len() != 0 {
				t.Errorf("failing call = %q, %q, %v; want its output discarded", out.B, ct, err)
			}
		})
	}
}

type htCtxKey struct{}

type htCountingInvoker struct{ calls int }

func (c *htCountingInvoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	c.calls++
	v, _ := ctx.Value(htCtxKey{}).(string)
	return []byte(v), nil
}

// Every path hands the invocation's context to the handler.
func TestCallContext(t *testing.T) {
	var seen string
	record := func(ctx context.Context) { seen, _ = ctx.Value(htCtxKey{}).(string) }
	tests := []struct {
		name string
		h    any
		path handlerPath
	}{
		{"raw", RawHandler(func(ctx context.Context, _ []byte, _ *Buffer) error { record(ctx); return nil }), pathRaw},
		{"noio", func(ctx context.Context) { record(ctx) }, pathNoIO},
		{"rawmessage", func(ctx context.Context, _ json.RawMessage) error { record(ctx); return nil }, pathRawMessage},
		{"reflect", func(ctx context.Context, _ int) error { record(ctx); return nil }, pathReflect},
		{"reflect without event", func(ctx context.Context) (int, error) { record(ctx); return 1, nil }, pathReflect},
		{"invoker", lambda.NewHandler(func(ctx context.Context) error { record(ctx); return nil }), pathInvoker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := newHandler(tt.h, handlerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if h.path != tt.path {
				t.Errorf("path %v, want %v", h.path, tt.path)
			}
			seen = ""
			ctx := context.WithValue(context.Background(), htCtxKey{}, tt.name)
			if _, err := h.call(ctx, []byte(`1`), new(Buffer)); err != nil {
				t.Fatal(err)
			}
			if seen != tt.name {
				t.Errorf("handler saw context value %q, want %q", seen, tt.name)
			}
		})
	}
}

type htPanicEvent struct{}

func (*htPanicEvent) UnmarshalJSON([]byte) error { panic("in UnmarshalJSON") }

type htPanicReader struct{ inRead, inClose bool }

func (r *htPanicReader) Read(p []byte) (int, error) {
	if r.inRead {
		panic("in Read")
	}
	return 0, io.EOF
}

func (r *htPanicReader) Close() error {
	if r.inClose {
		panic("in Close")
	}
	return nil
}

var errHTSentinel = errors.New("sentinel")

func htPanicString(context.Context) error { panic("boom <&>") }

func htPanicPointer(context.Context, any) (int, error) { panic(&compatPtrError{"ptr"}) }

func htPanicRaw(_ context.Context, _ []byte, out *Buffer) error {
	out.B = append(out.B, "partial"...)
	var m map[string]int
	m["x"] = 1 //nolint:staticcheck // the panic is the point
	return nil
}

func htPanicNilDeref(_ context.Context, m json.RawMessage) (json.RawMessage, error) {
	var p *compatEvent
	return json.RawMessage(p.Name), nil
}

func TestCallPanics(t *testing.T) {
	tests := []struct {
		name       string
		h          any
		wantType   string
		wantMsg    string
		firstLabel string // label of the first stack frame, when it is the test's
		noStack    bool
	}{
		{"string", htPanicString, "string", "boom <&>", "htPanicString", false},
		{"pointer", htPanicPointer, "compatPtrError", "ptr", "htPanicPointer", false},
		{"nil map", RawHandler(htPanicRaw), "plainError", "assignment to entry in nil map", "", false},
		{"nil dereference", htPanicNilDeref, "errorString", "runtime error: invalid memory address or nil pointer dereference", "", false},
		{"index", func(_ context.Context, ev []int) error { _ = ev[len(ev)+1]; return nil }, "boundsError", "runtime error: index out of range [3] with length 2", "", false},
		{"nil", func() { panic(nil) }, "PanicNilError", new(runtime.PanicNilError).Error(), "", false},
		{"sentinel", func(json.RawMessage) error { panic(errHTSentinel) }, "errorString", "sentinel", "", false},
		{"InvokeResponse_Error", func() { panic(messages.InvokeResponse_Error{Message: "m", Type: "T"}) }, "T", "m", "", true},
		{"UnmarshalJSON", func(*htPanicEvent) error { return nil }, "string", "in UnmarshalJSON", "(*htPanicEvent).UnmarshalJSON", false},
		{"invoker", &htPanicInvoker{}, "string", "in Invoke", "(*htPanicInvoker).Invoke", false},
		{"reader Read", func() (io.Reader, error) { return &htPanicReader{inRead: true}, nil }, "string", "in Read", "(*htPanicReader).Read", false},
		{"reader Close", func() (io.Reader, error) { return &htPanicReader{inClose: true}, nil }, "string", "in Close", "(*htPanicReader).Close", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := newHandler(tt.h, handlerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			out := new(Buffer)
			ct, err := h.call(context.Background(), []byte(`[1,2]`), out)
			var pe *PanicError
			if !errors.As(err, &pe) {
				t.Fatalf("call returned %v, want a *PanicError", err)
			}
			if ct != "" || out.Len() != 0 {
				t.Errorf("call left %q, %q after a panic", ct, out.B)
			}
			if tt.name == "sentinel" && !errors.Is(err, errHTSentinel) {
				t.Error("PanicError does not unwrap to the value it panicked with")
			}
			if got := writeErrorBody(out, err); got != tt.wantType {
				t.Errorf("error type %q, want %q", got, tt.wantType)
			}
			var body messages.InvokeResponse_Error
			if err := json.Unmarshal(out.B, &body); err != nil {
				t.Fatalf("error body %q: %v", out.B, err)
			}
			if body.Message != tt.wantMsg || body.Type != tt.wantType {
				t.Errorf("error body %s", out.B)
			}
			if tt.noStack {
				if body.StackTrace != nil {
					t.Errorf("error body has a stack trace: %s", out.B)
				}
				return
			}
			checkPanicStack(t, body.StackTrace, tt.firstLabel)
		})
	}
}

type htPanicInvoker struct{}

func (*htPanicInvoker) Invoke(context.Context, []byte) ([]byte, error) { panic("in Invoke") }

// checkPanicStack checks that a panic's stack starts past the recovering
// frames and shows this test file and the adapter.
func checkPanicStack(t *testing.T, frames []*messages.InvokeResponse_Error_StackFrame, firstLabel string) {
	t.Helper()
	if len(frames) == 0 || len(frames) > maxPanicFrames {
		t.Fatalf("%d stack frames", len(frames))
	}
	if firstLabel != "" && frames[0].Label != firstLabel {
		t.Errorf("first frame %+v, want label %q", *frames[0], firstLabel)
	}
	var inTest, inCall bool
	for _, f := range frames {
		switch {
		case f.Label == "gopanic" || strings.HasPrefix(f.Label, "(*handler).call.func"):
			t.Errorf("recovering frame %+v in the stack", *f)
		case strings.HasSuffix(f.Path, "handler_test.go") && f.Line > 0:
			inTest = true
		case strings.HasSuffix(f.Path, "handler.go") && f.Label == "(*handler).call":
			inCall = true
		}
	}
	if !inTest || !inCall {
		var b strings.Builder
		for _, f := range frames {
			fmt.Fprintf(&b, "\n  %s:%d %s", f.Path, f.Line, f.Label)
		}
		t.Errorf("stack lacks handler_test.go (%v) or (*handler).call (%v):%s", inTest, inCall, b.String())
	}
}

func TestPanicStackDepth(t *testing.T) {
	var deep func(n int)
	deep = func(n int) {
		if n == 0 {
			panic("deep")
		}
		deep(n - 1)
	}
	h, err := newHandler(func() { deep(100) }, handlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out := new(Buffer)
	_, err = h.call(context.Background(), nil, out)
	writeErrorBody(out, err)
	var body messages.InvokeResponse_Error
	if err := json.Unmarshal(out.B, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.StackTrace) != maxPanicFrames {
		t.Fatalf("%d frames, want %d", len(body.StackTrace), maxPanicFrames)
	}
	if f := body.StackTrace[0]; f.Label != "TestPanicStackDepth.func1" || !strings.HasSuffix(f.Path, "handler_test.go") {
		t.Errorf("first frame %+v, want the panicking closure", *f)
	}
}

type htCloser struct {
	r      io.Reader
	closed int
}

func (c *htCloser) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *htCloser) Close() error               { c.closed++; return nil }

type htJSONCloser struct {
	Name   string
	closed int
}

func (c *htJSONCloser) Read([]byte) (int, error) { return 0, io.EOF }
func (c *htJSONCloser) Close() error             { c.closed++; return nil }

// A reader sent as the response is closed once; one encoded as JSON is
// not closed, as in aws-lambda-go.
func TestReaderClose(t *testing.T) {
	rc := &htCloser{r: strings.NewReader("closing")}
	h, err := newHandler(func() (io.ReadCloser, error) { return rc, nil }, handlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out := new(Buffer)
	ct, err := h.call(context.Background(), nil, out)
	if err != nil || ct != bytesContentType || out.String() != "closing" || rc.closed != 1 {
		t.Errorf("call = %q, %q, %v; closed %d times, want once", out.B, ct, err, rc.closed)
	}

	jc := &htJSONCloser{Name: "j"}
	h, err = newHandler(func() (io.ReadCloser, error) { return jc, nil }, handlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	ct, err = h.call(context.Background(), nil, out)
	if err != nil || ct != jsonContentType || out.String() != `{"Name":"j"}` || jc.closed != 0 {
		t.Errorf("call = %q, %q, %v; closed %d times, want never", out.B, ct, err, jc.closed)
	}
}

type htTraceEvent struct {
	Kind  string
	Type  string
	Value any
}

// The handlertrace hooks see the same events as under aws-lambda-go.
func TestTraceHooks(t *testing.T) {
	handlers := []struct {
		name string
		h    any
	}{
		{"reflect", compatRespond},
		{"reflect without output", func(*compatEvent) error { return nil }},
		{"reflect without event", func() (string, error) { return "out", nil }},
		{"rawmessage", func(_ context.Context, m json.RawMessage) (json.RawMessage, error) { return m, nil }},
		{"rawmessage without output", func(json.RawMessage) error { return nil }},
		{"noio", func(context.Context) error { return nil }},
		{"reader", func() (io.Reader, error) { return strings.NewReader("r"), nil }},
		{"error", func(compatEvent) (int, error) { return 0, errors.New("no response event") }},
	}
	run := func(invoke func(ctx context.Context)) []htTraceEvent {
		var events []htTraceEvent
		hook := func(kind string) func(context.Context, any) {
			return func(_ context.Context, v any) {
				events = append(events, htTraceEvent{kind, fmt.Sprintf("%T", v), v})
			}
		}
		invoke(handlertrace.NewContext(context.Background(), handlertrace.HandlerTrace{
			RequestEvent: hook("request"), ResponseEvent: hook("response"),
		}))
		return events
	}
	payload := []byte(`{"name":"t","n":1}`)
	for _, tt := range handlers {
		t.Run(tt.name, func(t *testing.T) {
			h, err := newHandler(tt.h, handlerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			got := run(func(ctx context.Context) { _, _ = h.call(ctx, payload, new(Buffer)) })
			want := run(func(ctx context.Context) { _, _ = lambda.NewHandler(tt.h).Invoke(ctx, payload) })
			if len(got) != len(want) {
				t.Fatalf("events %+v, want %+v", got, want)
			}
			for i := range got {
				if got[i].Kind != want[i].Kind || got[i].Type != want[i].Type ||
					(got[i].Type != "*strings.Reader" && !reflect.DeepEqual(got[i].Value, want[i].Value)) {
					t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// One handler serves many slots at once, each with its own buffer.
func TestCallConcurrent(t *testing.T) {
	handlers := []any{
		compatRespond,
		func(_ context.Context, m json.RawMessage) (json.RawMessage, error) { return m, nil },
		func(_ context.Context, m map[string]any) (map[string]any, error) { return m, nil },
	}
	const slots, calls = 8, 50
	for _, f := range handlers {
		h, err := newHandler(f, handlerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range slots {
			wg.Go(func() {
				out := new(Buffer)
				for i := range calls {
					payload := fmt.Appendf(nil, `{"name":"w%d-%d","n":%d}`, w, i, i)
					out.Reset()
					if _, err := h.call(context.Background(), payload, out); err != nil {
						t.Error(err)
						return
					}
					want, err := lambda.NewHandler(f).Invoke(context.Background(), payload)
					if err != nil || !bytes.Equal(out.B, want) {
						t.Errorf("slot %d call %d: %q, want %q (%v)", w, i, out.B, want, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// The raw and no-event paths must not allocate, a lambda.Handler only the
// copy of its payload; the others must allocate less than aws-lambda-go for
// the same handler.
func TestCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	payload := []byte(`{"name":"alloc","n":1}`)
	exact := []struct {
		name string
		h    any
		want float64
	}{
		{"raw", RawHandler(benchRaw), 0},
		{"noio", func(context.Context) error { return nil }, 0},
		{"invoker", benchInvoker{}, 1}, // the payload handed to Invoke
	}
	for _, tt := range exact {
		h, err := newHandler(tt.h, handlerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		out := new(Buffer)
		if n := testing.AllocsPerRun(100, func() {
			out.Reset()
			_, _ = h.call(ctx, payload, out)
		}); n != tt.want {
			t.Errorf("%s: %v allocations per call, want %v", tt.name, n, tt.want)
		}
	}
	fewer := []struct {
		name string
		h    any
		max  float64
	}{
		{"rawmessage", benchRawMessage, 1}, // the event handed to the handler
		{"typed", compatRespond, -1},
	}
	for _, tt := range fewer {
		h, err := newHandler(tt.h, handlerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		out := new(Buffer)
		got := testing.AllocsPerRun(100, func() {
			out.Reset()
			_, _ = h.call(ctx, payload, out)
		})
		aws := lambda.NewHandler(tt.h)
		want := testing.AllocsPerRun(100, func() { _, _ = aws.Invoke(ctx, payload) })
		if got >= want || (tt.max >= 0 && got > tt.max) {
			t.Errorf("%s: %v allocations per call (aws-lambda-go: %v, limit %v)", tt.name, got, want, tt.max)
		}
	}
}

// benchEvent and benchResponse are a typical small API event and answer.
type benchEvent struct {
	ID      string            `json:"id"`
	Path    string            `json:"path"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Count   int               `json:"count"`
}

type benchResponse struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
}

var benchPayload = []byte(`{"id":"4f6e1b2a-9c3d-4e5f-8a7b-1c2d3e4f5a6b","path":"/items/42","method":"GET",` +
	`"headers":{"accept":"application/json","user-agent":"bench/1.0"},"body":"{\"q\":\"lmigo\"}","count":3}`)

var benchHeaders = map[string]string{"content-type": "application/json"}

func benchTyped(_ context.Context, ev benchEvent) (benchResponse, error) {
	return benchResponse{StatusCode: 200, Headers: benchHeaders, Body: ev.Body}, nil
}

func benchRawMessage(_ context.Context, ev json.RawMessage) (json.RawMessage, error) {
	return ev, nil
}

func benchRaw(_ context.Context, payload []byte, out *Buffer) error {
	out.B = append(out.B, payload...)
	return nil
}

// benchInvoker is the closest aws-lambda-go has to a RawHandler.
type benchInvoker struct{}

func (benchInvoker) Invoke(_ context.Context, payload []byte) ([]byte, error) { return payload, nil }

// benchContext looks like an invocation's context: a deadline and a
// LambdaContext.
func benchContext(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	b.Cleanup(cancel)
	return lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "bench"})
}

// BenchmarkCall runs one invocation through the adapter, side by side with
// aws-lambda-go's lambda.NewHandler(f).Invoke for the same handler.
func BenchmarkCall(b *testing.B) {
	cases := []struct {
		name  string
		lmigo any
		aws   any
	}{
		{"typed", benchTyped, benchTyped},
		{"rawmessage", benchRawMessage, benchRawMessage},
		{"raw", RawHandler(benchRaw), benchInvoker{}},
		{"noio", func(context.Context) error { return nil }, func(context.Context) error { return nil }},
	}
	for _, c := range cases {
		b.Run(c.name+"/lmigo", func(b *testing.B) {
			h, err := newHandler(c.lmigo, handlerConfig{})
			if err != nil {
				b.Fatal(err)
			}
			ctx := benchContext(b)
			out := new(Buffer)
			b.ReportAllocs()
			b.SetBytes(int64(len(benchPayload)))
			for b.Loop() {
				out.Reset()
				if _, err := h.call(ctx, benchPayload, out); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/aws-lambda-go", func(b *testing.B) {
			h := lambda.NewHandler(c.aws)
			ctx := benchContext(b)
			b.ReportAllocs()
			b.SetBytes(int64(len(benchPayload)))
			for b.Loop() {
				if _, err := h.Invoke(ctx, benchPayload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkErrorBody encodes the body of a returned error, against the
// json.Marshal of the messages.InvokeResponse_Error aws-lambda-go sends.
func BenchmarkErrorBody(b *testing.B) {
	err := errors.New("item 42 not found")
	b.Run("lmigo", func(b *testing.B) {
		out := new(Buffer)
		b.ReportAllocs()
		for b.Loop() {
			out.Reset()
			writeErrorBody(out, err)
		}
	})
	b.Run("aws-lambda-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&messages.InvokeResponse_Error{Message: err.Error(), Type: "errorString"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRawMessageResponse: a json.RawMessage result
// of each size sent from the handler's own bytes (direct), against the same
// result copied into the slot's buffer (copy; the buffer is reused, as
// under the retain cap). The handler returns a cached body, as the load
// test's does. It found no size under which copying wins, so none is
// copied (callRawMessage).
func BenchmarkRawMessageResponse(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 16 << 10, 256 << 10, 6 << 20} {
		res := json.RawMessage(`"` + strings.Repeat("x", size-2) + `"`)
		h, err := newHandler(func(context.Context, json.RawMessage) (json.RawMessage, error) { return res, nil },
			handlerConfig{})
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"direct", "copy"} {
			b.Run(fmt.Sprintf("%s/%d", mode, size), func(b *testing.B) {
				ctx := benchContext(b)
				out := new(Buffer)
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					out.Reset()
					_, _, direct, err := h.run(ctx, []byte(`{}`), out)
					if err != nil || direct == nil {
						b.Fatal(err, "not direct")
					}
					if mode == "copy" {
						out.B = append(out.B, direct...)
					}
				}
			})
		}
	}
}

// Byte-for-byte comparison of the handler adapter with aws-lambda-go
// v1.55.1: for each handler form and payload, the response (or the error
// body) lmigo produces must equal what lambda.NewHandler(f).Invoke returns
// (or the body aws-lambda-go builds from the error it returns).

type compatEvent struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

type compatOut struct {
	Msg   string            `json:"msg"`
	HTML  string            `json:"html"`
	N     int               `json:"n"`
	Tags  []string          `json:"tags"`
	Attrs map[string]any    `json:"attrs,omitempty"`
	Ptr   *int              `json:"ptr"`
	Raw   json.RawMessage   `json:"raw,omitempty"`
	Bytes []byte            `json:"bytes,omitempty"`
	Hdrs  map[string]string `json:"hdrs,omitempty"`
}

// compatValueError and compatPtrError are error types whose names become
// error types, by value and through a pointer.
type compatValueError struct{ msg string }

func (e compatValueError) Error() string { return e.msg }

type compatPtrError struct{ msg string }

func (e *compatPtrError) Error() string {
	if e == nil {
		return "nil *compatPtrError"
	}
	return e.msg
}

// compatRespond answers an event; negative N picks an error.
func compatRespond(ev compatEvent) (compatOut, error) {
	switch ev.N {
	case -1:
		return compatOut{}, &compatPtrError{"pointer <error> & " + ev.Name}
	case -2:
		return compatOut{}, compatValueError{"value error"}
	case -3:
		return compatOut{}, messages.InvokeResponse_Error{
			Message: "custom <message>", Type: "Custom.Type",
			StackTrace: []*messages.InvokeResponse_Error_StackFrame{{Path: "a/b.go", Line: 3, Label: "f"}},
		}
	case -4:
		return compatOut{}, &messages.InvokeResponse_Error{Message: "pointer ive", Type: "Ptr"}
	case -5:
		return compatOut{}, fmt.Errorf("wrapped: %w", io.ErrUnexpectedEOF)
	case -6:
		return compatOut{}, errors.Join(errors.New("one"), errors.New("two"))
	case -7:
		return compatOut{}, errors.New("invalid utf-8 \xff and \u2028")
	}
	n := ev.N
	return compatOut{
		Msg:   "hello " + ev.Name,
		HTML:  "<b>&amp;</b> \u2028",
		N:     ev.N,
		Tags:  []string{"a", "<>"},
		Attrs: map[string]any{"z": 1.5, "a": []any{nil, true}},
		Ptr:   &n,
		Raw:   json.RawMessage(`{"k": [1, 2]}`),
		Bytes: []byte("bytes"),
	}, nil
}

var compatEventPayloads = []string{
	`{"name":"x","n":1}`,
	`{"name":"<a&b>","n":2}`,
	"  {\"n\": 3,\n \"name\" : \"sp\" }\t\r\n",
	`{"n":1} trailing garbage`,
	`{"n":1}{"n":2}`,
	`{"n":1}}`,
	`{"name":"\u00e9\u2028","n":4}`,
	"{\"name\":\"\xff\xfe\",\"n\":5}",
	`{"n":-1,"name":"p"}`,
	`{"n":-2}`,
	`{"n":-3}`,
	`{"n":-4}`,
	`{"n":-5}`,
	`{"n":-6}`,
	`{"n":-7}`,
	`{"n":"str"}`,
	`{"n":1.5}`,
	`{"unknown":1,"n":6}`,
	`{"N":7,"NAME":"case"}`,
	``,
	`   `,
	`{"n":`,
	`nul`,
	`null`,
	`[1,2]`,
	`"str"`,
	`123abc`,
	`123 456`,
	`{bad}`,
	"\xef\xbb\xbf{}",
}

var compatValuePayloads = []string{
	`{"a":1,"b":[true,false,null],"c":{"d":"<&>"}}`,
	` [ 1 , 2.50 , -0 , 1e400 ] `,
	`12345678901234567890`,
	`1e21`,
	`0.000001`,
	`"str <&> \u2028 \ud800"`,
	`"aGVsbG8gPD4m"`,
	`"not base64!"`,
	`true`,
	`null`,
	`{"a":1}{"b":2}`,
	`1x`,
	``,
	`{`,
	`[1,]`,
	"\"\xff\"",
	`"\u0000\u001f"`,
}

// Readers used as responses.
type compatTypedReader struct{ *strings.Reader }

func (compatTypedReader) ContentType() string { return "text/html; charset=utf-8" }

type compatFieldReader struct {
	Name string
	r    io.Reader
}

func (f *compatFieldReader) Read(p []byte) (int, error) { return f.r.Read(p) }

type compatChanReader struct {
	C chan int
	*strings.Reader
}

type compatErrReader struct{ read bool }

func (r *compatErrReader) Read(p []byte) (int, error) {
	if !r.read {
		r.read = true
		return copy(p, "partial"), nil
	}
	return 0, compatValueError{"read failed"}
}

type compatBadMarshaler struct{}

func (compatBadMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("cannot marshal") }

type compatInvoker struct{}

func (compatInvoker) Invoke(_ context.Context, payload []byte) ([]byte, error) {
	switch string(payload) {
	case `"fail"`:
		return nil, &compatPtrError{"invoker failed"}
	case `"nil"`:
		return nil, nil
	}
	return append([]byte("invoked:"), payload...), nil
}

type (
	compatNamedRawMessage func(context.Context, json.RawMessage) (json.RawMessage, error)
	compatNamedNoIO       func(context.Context) error
)

type compatCase struct {
	name        string
	handler     any
	payloads    []string // nil: compatEventPayloads
	path        handlerPath
	contentType string // on success; "" is application/json
}

func compatCases() []compatCase {
	ev := compatEventPayloads
	val := compatValuePayloads
	raw := append(append([]string{}, val...), ev...)
	one := []string{`{"name":"x","n":1}`, `{bad`}
	rawOut := func(s string) func() (json.RawMessage, error) {
		return func() (json.RawMessage, error) { return json.RawMessage(s), nil }
	}
	return []compatCase{
		// The twelve signatures of lambda.Start.
		{name: "func()", handler: func() {}, path: pathNoIO},
		{name: "func(TIn)", handler: func(compatEvent) {}, path: pathReflect},
		{name: "func() error", handler: func() error { return nil }, path: pathNoIO},
		{name: "func(TIn) error", handler: func(e compatEvent) error { _, err := compatRespond(e); return err }, path: pathReflect},
		{name: "func() (TOut, error)", handler: func() (compatOut, error) { return compatRespond(compatEvent{Name: "none"}) }, path: pathReflect},
		{name: "func(TIn) (TOut, error)", handler: compatRespond, path: pathReflect},
		{name: "func(ctx)", handler: func(context.Context) {}, path: pathNoIO},
		{name: "func(ctx) error", handler: func(context.Context) error { return &compatPtrError{"ctx error"} }, path: pathNoIO},
		{name: "func(ctx) (TOut, error)", handler: func(context.Context) (*compatOut, error) {
			out, err := compatRespond(compatEvent{N: 9})
			return &out, err
		}, path: pathReflect},
		{name: "func(ctx, TIn)", handler: func(context.Context, *compatEvent) {}, path: pathReflect},
		{name: "func(ctx, TIn) error", handler: func(_ context.Context, e *compatEvent) error {
			if e == nil {
				return errors.New("nil event")
			}
			_, err := compatRespond(*e)
			return err
		}, path: pathReflect},
		{name: "func(ctx, TIn) (TOut, error)", handler: func(_ context.Context, e compatEvent) (compatOut, error) {
			return compatRespond(e)
		}, path: pathReflect},

		// Errors of every kind, from handlers without an event.
		{name: "value error", handler: func() error { return compatValueError{"v"} }, payloads: one, path: pathNoIO},
		{name: "errors.New", handler: func(context.Context) error { return errors.New("plain <&>") }, payloads: one, path: pathNoIO},
		{name: "InvokeResponse_Error", handler: func() (int, error) {
			return 0, messages.InvokeResponse_Error{Message: "m", Type: "T", ShouldExit: true}
		}, payloads: one, path: pathReflect},
		{name: "typed nil concrete error", handler: func() (int, *compatPtrError) { return 1, nil }, payloads: one, path: pathReflect},
		{name: "concrete error type", handler: func() *compatPtrError { return &compatPtrError{"c"} }, payloads: one, path: pathReflect},

		// Events and responses of other types.
		{name: "any echo", handler: func(_ context.Context, v any) (any, error) { return v, nil }, payloads: val, path: pathReflect},
		{name: "map echo", handler: func(v map[string]any) (map[string]any, error) { return v, nil }, payloads: val, path: pathReflect},
		{name: "string echo", handler: func(_ context.Context, s string) (string, error) { return s, nil }, payloads: val, path: pathReflect},
		{name: "[]byte echo", handler: func(_ context.Context, b []byte) ([]byte, error) { return b, nil }, payloads: val, path: pathReflect},
		{name: "[]byte out", handler: func() ([]byte, error) { return []byte("bin\x00\xff<"), nil }, payloads: one, path: pathReflect},
		{name: "float64 echo", handler: func(f float64) (float64, error) { return f, nil }, payloads: val, path: pathReflect},

		// json.RawMessage: the fast path.
		{name: "RawMessage echo", handler: func(_ context.Context, m json.RawMessage) (json.RawMessage, error) { return m, nil }, payloads: raw, path: pathRawMessage},
		{name: "RawMessage echo without ctx", handler: func(m json.RawMessage) (json.RawMessage, error) { return m, nil }, payloads: raw, path: pathRawMessage},
		{name: "RawMessage error only", handler: func(_ context.Context, m json.RawMessage) error {
			if string(m) == `"fail"` {
				return compatValueError{"failed"}
			}
			return nil
		}, payloads: append([]string{`"fail"`}, raw...), path: pathRawMessage},
		{name: "RawMessage error only without ctx", handler: func(json.RawMessage) error { return nil }, payloads: raw, path: pathRawMessage},
		{name: "RawMessage no return", handler: func(context.Context, json.RawMessage) {}, payloads: raw, path: pathRawMessage},
		{name: "RawMessage no return without ctx", handler: func(json.RawMessage) {}, payloads: raw, path: pathRawMessage},
		{name: "named RawMessage", handler: compatNamedRawMessage(func(_ context.Context, m json.RawMessage) (json.RawMessage, error) {
			return m, nil
		}), payloads: val, path: pathRawMessage},
		{name: "RawMessage nil", handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }, payloads: one, path: pathRawMessage},
		{name: "RawMessage error", handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{}`), &compatPtrError{"raw failed"}
		}, payloads: one, path: pathRawMessage},
		{name: "RawMessage out", handler: rawOut(` { "a" : [1, 2], "s": "x y <&>" } `), payloads: one, path: pathReflect},
		{name: "RawMessage out invalid", handler: rawOut(`{bad`), payloads: one, path: pathReflect},
		{name: "RawMessage out empty", handler: rawOut(``), payloads: one, path: pathReflect},
		{name: "RawMessage out trailing", handler: rawOut(`{} {}`), payloads: one, path: pathReflect},
		{name: "RawMessage out line separator", handler: rawOut("\"\u2028\""), payloads: one, path: pathReflect},
		{name: "RawMessage out invalid utf-8", handler: rawOut("\"\xff\""), payloads: one, path: pathReflect},
		{name: "RawMessage in, constant out", handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage("[1,\n2]"), nil
		}, payloads: one, path: pathRawMessage},
		{name: "named noio", handler: compatNamedNoIO(func(context.Context) error { return nil }), payloads: one, path: pathNoIO},

		// Readers.
		{name: "strings.Reader", handler: func() (*strings.Reader, error) { return strings.NewReader("raw <b>&</b>"), nil },
			payloads: one, path: pathReflect, contentType: bytesContentType},
		{name: "io.Reader", handler: func(context.Context) (io.Reader, error) { return strings.NewReader("\x00\xffbin"), nil },
			payloads: one, path: pathReflect, contentType: bytesContentType},
		{name: "bytes.Buffer", handler: func() (*bytes.Buffer, error) { return bytes.NewBufferString("buffer"), nil },
			payloads: one, path: pathReflect, contentType: bytesContentType},
		{name: "reader with content type", handler: func() (io.Reader, error) {
			return compatTypedReader{strings.NewReader("<html></html>")}, nil
		}, payloads: one, path: pathReflect, contentType: "text/html; charset=utf-8"},
		{name: "reader with exported field", handler: func() (io.Reader, error) {
			return &compatFieldReader{Name: "json wins", r: strings.NewReader("unused")}, nil
		}, payloads: one, path: pathReflect},
		{name: "reader that does not encode", handler: func() (io.Reader, error) {
			return compatChanReader{make(chan int), strings.NewReader("chan reader")}, nil
		}, payloads: one, path: pathReflect, contentType: bytesContentType},
		{name: "io.NopCloser", handler: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("nop")), nil },
			payloads: one, path: pathReflect},
		{name: "nil io.Reader", handler: func() (io.Reader, error) { return nil, nil }, payloads: one, path: pathReflect},
		{name: "typed nil reader", handler: func() (*strings.Reader, error) { return nil, nil }, payloads: one, path: pathReflect},
		{name: "reader error", handler: func() (io.Reader, error) { return &compatErrReader{}, nil }, payloads: one, path: pathReflect},
		{name: "empty reader", handler: func() (io.Reader, error) { return strings.NewReader(""), nil },
			payloads: one, path: pathReflect, contentType: bytesContentType},

		// Nil and unencodable responses.
		{name: "nil pointer", handler: func() (*compatOut, error) { return nil, nil }, payloads: one, path: pathReflect},
		{name: "nil any", handler: func() (any, error) { return nil, nil }, payloads: one, path: pathReflect},
		{name: "nil slice", handler: func() ([]int, error) { return nil, nil }, payloads: one, path: pathReflect},
		{name: "nil map", handler: func() (map[string]int, error) { return nil, nil }, payloads: one, path: pathReflect},
		{name: "NaN", handler: func() (float64, error) { return math.NaN(), nil }, payloads: one, path: pathReflect},
		{name: "chan", handler: func() (chan int, error) { return make(chan int), nil }, payloads: one, path: pathReflect},
		{name: "func in any", handler: func() (any, error) { return func() {}, nil }, payloads: one, path: pathReflect},
		{name: "marshaler error", handler: func() (compatBadMarshaler, error) { return compatBadMarshaler{}, nil }, payloads: one, path: pathReflect},
		{name: "html string", handler: func() (string, error) { return "<script>&</script>\u2028\xff", nil }, payloads: one, path: pathReflect},

		// lambda.Handler objects.
		{name: "lambda.Handler", handler: compatInvoker{}, payloads: append([]string{`"fail"`, `"nil"`}, val...),
			path: pathInvoker, contentType: bytesContentType},
		{name: "lambda.NewHandler", handler: lambda.NewHandler(compatRespond), path: pathInvoker},
	}
}

// compatOptions pairs lmigo's handler options with aws-lambda-go's.
var compatOptions = []struct {
	name string
	cfg  handlerConfig
	aws  []lambda.Option
}{
	{name: "default"},
	{name: "escapeHTML", cfg: handlerConfig{escapeHTML: true}, aws: []lambda.Option{lambda.WithSetEscapeHTML(true)}},
	{name: "indent", cfg: handlerConfig{indentPrefix: ">", indent: "\t"}, aws: []lambda.Option{lambda.WithSetIndent(">", "\t")}},
	{name: "indent only", cfg: handlerConfig{indent: "  "}, aws: []lambda.Option{lambda.WithSetIndent("", "  ")}},
	{name: "useNumber", cfg: handlerConfig{useNumber: true}, aws: []lambda.Option{lambda.WithUseNumber(true)}},
	{name: "disallowUnknownFields", cfg: handlerConfig{disallowUnknownFields: true},
		aws: []lambda.Option{lambda.WithDisallowUnknownFields(true)}},
	{name: "all", cfg: handlerConfig{escapeHTML: true, indent: " ", useNumber: true, disallowUnknownFields: true},
		aws: []lambda.Option{lambda.WithSetEscapeHTML(true), lambda.WithSetIndent("", " "),
			lambda.WithUseNumber(true), lambda.WithDisallowUnknownFields(true)}},
}

func TestCompat(t *testing.T) {
	for _, opt := range compatOptions {
		for _, tc := range compatCases() {
			t.Run(opt.name+"/"+tc.name, func(t *testing.T) {
				h, err := newHandler(tc.handler, opt.cfg)
				if err != nil {
					t.Fatalf("newHandler: %v", err)
				}
				if h.path != tc.path {
					t.Errorf("path = %v, want %v", h.path, tc.path)
				}
				payloads := tc.payloads
				if payloads == nil {
					payloads = compatEventPayloads
				}
				contentType := tc.contentType
				if contentType == "" {
					contentType = jsonContentType
				}
				for _, p := range payloads {
					compareWithAWS(t, h, tc.handler, opt.aws, []byte(p), contentType)
				}
			})
		}
	}
}

// compareWithAWS runs payload through h and through aws-lambda-go's handler
// for f and compares the responses, or the error bodies and types.
func compareWithAWS(t testing.TB, h *handler, f any, awsOpts []lambda.Option, payload []byte, contentType string) {
	t.Helper()
	ctx := context.Background()
	want, wantErr := lambda.NewHandlerWithOptions(f, awsOpts...).Invoke(ctx, bytes.Clone(payload))
	want = bytes.Clone(want) // it aliases a pooled buffer

	out := new(Buffer)
	gotType, gotErr := h.call(ctx, payload, out)
	switch {
	case wantErr == nil && gotErr == nil:
		if !bytes.Equal(out.B, want) {
			t.Errorf("payload %q:\n got %q\nwant %q", payload, out.B, want)
		}
		if gotType != contentType {
			t.Errorf("payload %q: content type %q, want %q", payload, gotType, contentType)
		}
	case wantErr != nil && gotErr != nil:
		if out.Len() != 0 {
			t.Errorf("payload %q: error %v left %q in out", payload, gotErr, out.B)
		}
		wantBody, wantType := awsErrorBody(t, wantErr)
		gotErrType := writeErrorBody(out, gotErr)
		if !bytes.Equal(out.B, wantBody) || gotErrType != wantType {
			t.Errorf("payload %q: error body\n got %s (%q)\nwant %s (%q)", payload, out.B, gotErrType, wantBody, wantType)
		}
	default:
		t.Errorf("payload %q: error %v, want %v (response %q, want %q)", payload, gotErr, wantErr, out.B, want)
	}
}

// awsErrorBody is the error body aws-lambda-go v1.55.1 sends for an error
// returned by a handler (lambda/errors.go, lambdaErrorResponse).
func awsErrorBody(t testing.TB, err error) ([]byte, string) {
	t.Helper()
	ive, ok := err.(messages.InvokeResponse_Error) // as aws-lambda-go does: unwrapped only
	if !ok {
		typ := reflect.TypeOf(err)
		name := typ.Name()
		if typ.Kind() == reflect.Pointer {
			name = typ.Elem().Name()
		}
		ive = messages.InvokeResponse_Error{Message: err.Error(), Type: name}
	}
	b, err := json.Marshal(&ive)
	if err != nil {
		t.Fatal(err)
	}
	return b, ive.Type
}

// FuzzCompat compares payload decoding and response encoding with
// aws-lambda-go for handlers that pass the payload through.
func FuzzCompat(f *testing.F) {
	handlers := []struct {
		f   any
		cfg handlerConfig
		aws []lambda.Option
	}{
		{f: func(_ context.Context, m json.RawMessage) (json.RawMessage, error) { return m, nil }},
		{f: func(m json.RawMessage) error { return nil }},
		{f: func(_ context.Context, v any) (any, error) { return v, nil }},
		{f: compatRespond},
		{f: func(b []byte) ([]byte, error) { return b, nil }},
		{f: func(s string) (string, error) { return s, nil }},
		{f: func(m map[string]json.RawMessage) (map[string]json.RawMessage, error) { return m, nil }},
		{f: func(v any) (any, error) { return v, nil }, cfg: handlerConfig{useNumber: true, escapeHTML: true},
			aws: []lambda.Option{lambda.WithUseNumber(true), lambda.WithSetEscapeHTML(true)}},
		{f: compatRespond, cfg: handlerConfig{disallowUnknownFields: true, indent: "\t"},
			aws: []lambda.Option{lambda.WithDisallowUnknownFields(true), lambda.WithSetIndent("", "\t")}},
	}
	for _, p := range append(append([]string{}, compatEventPayloads...), compatValuePayloads...) {
		for i := range handlers {
			f.Add([]byte(p), uint8(i))
		}
	}
	built := make([]*handler, len(handlers))
	for i, h := range handlers {
		var err error
		if built[i], err = newHandler(h.f, h.cfg); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, payload []byte, which uint8) {
		i := int(which) % len(handlers)
		compareWithAWS(t, built[i], handlers[i].f, handlers[i].aws, payload, jsonContentType)
	})
}

// eventForms is every handler form lambda.Start accepts, built around one
// event handler f: with and without the context, the event by value and by
// pointer, returning the result, only the error, or nothing.
func eventForms[T, U any](f func(context.Context, T) (U, error)) map[string]any {
	deref := func(e *T) T {
		if e == nil {
			var zero T
			return zero
		}
		return *e
	}
	return map[string]any{
		"func(ctx, TIn) (TOut, error)": f,
		"func(TIn) (TOut, error)":      func(e T) (U, error) { return f(context.Background(), e) },
		"func(ctx, *TIn) (*TOut, error)": func(ctx context.Context, e *T) (*U, error) {
			out, err := f(ctx, deref(e))
			return &out, err
		},
		"func(ctx, TIn) error": func(ctx context.Context, e T) error { _, err := f(ctx, e); return err },
		"func(TIn) error":      func(e T) error { _, err := f(context.Background(), e); return err },
		"func(ctx, TIn)":       func(ctx context.Context, e T) { _, _ = f(ctx, e) },
		"func(TIn)":            func(e T) { _, _ = f(context.Background(), e) },
		"func(ctx) (TOut, error)": func(ctx context.Context) (U, error) {
			var zero T
			return f(ctx, zero)
		},
		"func() (TOut, error)": func() (U, error) { var zero T; return f(context.Background(), zero) },
		"func(ctx, TIn) (any, error)": func(ctx context.Context, e T) (any, error) {
			return f(ctx, e)
		},
	}
}

// eventPayloads are the event's payload and variants of it that take the
// decoder's other paths or fail: whitespace around it, data after it, cut
// short, not an object, and invalid UTF-8 in a string.
func eventPayloads(p []byte) [][]byte {
	trimmed := bytes.TrimSpace(p)
	return [][]byte{
		p,
		append(append([]byte(" \n\t"), trimmed...), " \r\n"...),
		append(bytes.Clone(trimmed), `{"more":1}`...),
		append(bytes.Clone(trimmed), " trailing garbage"...),
		trimmed[:len(trimmed)/2],
		[]byte(`[` + string(trimmed) + `]`),
		bytes.Replace(trimmed, []byte(`":"`), []byte("\":\"\xff\xfe"), 3),
		[]byte(`null`),
		[]byte(`{}`),
	}
}

// TestCompatEvents: for every handler form and each realistic event, the
// default codec's response (or error body) is byte for byte aws-lambda-go's,
// under each option set.
func TestCompatEvents(t *testing.T) {
	forms := map[string]map[string]any{
		"apigw":  eventForms(events.HTTPAPI),
		"sqs":    eventForms(events.SQS),
		"s3":     eventForms(events.S3),
		"github": eventForms(events.GitHubPush),
	}
	for _, ev := range events.All() {
		payloads := eventPayloads(ev.Payload)
		if ev.Name == "github" { // a push to a tag: the handler's error
			payloads = append(payloads, bytes.Replace(ev.Payload, []byte(`"refs/heads/main"`), []byte(`"refs/tags/v1.4.0"`), 1))
		}
		for _, opt := range compatOptions {
			for form, f := range forms[ev.Name] {
				t.Run(ev.Name+"/"+opt.name+"/"+form, func(t *testing.T) {
					h, err := newHandler(f, opt.cfg)
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range payloads {
						compareWithAWS(t, h, f, opt.aws, p, jsonContentType)
					}
				})
			}
		}
	}
}

// lateUse stages a goroutine that outlives its invocation: keep starts it
// with what it kept, and it uses it only once the next invocation's
// handler has begun (next), which answers only after the late use ended.
// Channels, not time, order the two.
type lateUse struct {
	began  chan struct{}
	done   chan lateResult
	result chan lateResult // to the test, once the next invocation saw it
}

// lateResult is what the late use returned, or the panic it raised.
type lateResult struct {
	n        int
	err      error
	panicked any
}

func newLateUse() *lateUse {
	return &lateUse{began: make(chan struct{}), done: make(chan lateResult, 1), result: make(chan lateResult, 1)}
}

func (l *lateUse) keep(use func() (int, error)) {
	go func() {
		<-l.began
		var r lateResult
		defer func() {
			r.panicked = recover() // a crash of the test binary would hide the rest
			l.done <- r
		}()
		r.n, r.err = use()
	}()
}

// next lets the late use run and waits until it is over.
func (l *lateUse) next() {
	close(l.began)
	l.result <- <-l.done
}

// check fails t unless the late use got wantErr without panicking.
func (l *lateUse) check(t *testing.T, wantErr error) {
	t.Helper()
	r := <-l.result
	if r.panicked != nil {
		t.Errorf("the late use panicked: %v", r.panicked)
	}
	if wantErr != nil && (r.n != 0 || !errors.Is(r.err, wantErr)) {
		t.Errorf("late Write = %d, %v; want 0, %v", r.n, r.err, wantErr)
	}
}

// lateWriterTo is a streamed result: "A" and "A!" (which then panics)
// keep the writer their WriteTo was given, "B" lets that writer be used,
// then writes.
type lateWriterTo struct {
	name string
	late *lateUse
}

func (lateWriterTo) Read([]byte) (int, error) { panic("written out, not read") }

func (b lateWriterTo) WriteTo(w io.Writer) (int64, error) {
	switch b.name {
	case "A", "A!":
		b.late.keep(func() (int, error) { return writeEveryWay(w, "LATE-FROM-A") })
		if b.name == "A!" {
			panic("A ends")
		}
	default:
		b.late.next()
	}
	n, err := io.WriteString(w, b.name)
	return int64(n), err
}

// writeEveryWay writes s to w through Write, WriteString and ReadFrom
// (if w has it) and returns the bytes written and Write's error, or an
// error saying how the others' differed from it.
func writeEveryWay(w io.Writer, s string) (int, error) {
	n, err := w.Write([]byte(s))
	k, err2 := io.WriteString(w, s)
	n += k
	errs := []error{err2}
	if rf, ok := w.(io.ReaderFrom); ok {
		k, err3 := rf.ReadFrom(strings.NewReader(s))
		n += int(k)
		errs = append(errs, err3)
	}
	for _, e := range errs {
		if !errors.Is(e, err) {
			return n, fmt.Errorf("write: %v, then %v", err, e)
		}
	}
	return n, err
}

// TestLateStreamWriter: at N=1 a streamed io.WriterTo that keeps its
// writer, and returns or panics, gets ErrInvocationEnded when it writes
// once the next stream on the slot has begun; that stream carries only
// its own bytes.
func TestLateStreamWriter(t *testing.T) {
	for _, a := range []string{"A", "A!"} {
		t.Run(a, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			late := newLateUse()
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(_ context.Context, name string) (io.Reader, error) {
				return lateWriterTo{name: name, late: late}, nil
			})
			if r := invoke(t, api, fmt.Sprintf("%q", a)); (a == "A") != (r.Err == nil) {
				t.Errorf("%s answered %q, err %+v", a, r.Body, r.Err)
			}
			r := invoke(t, api, `"B"`)
			if r.Err != nil || string(r.Body) != "B" || r.ResponseMode != rapitest.ResponseModeStreaming {
				t.Errorf("B answered %q in mode %q, err %+v; want \"B\" streamed", r.Body, r.ResponseMode, r.Err)
			}
			late.check(t, ErrInvocationEnded)
		})
	}
}

// lateRaw is a RawHandler: "A" and "A!" (which then calls
// runtime.Goexit) keep out, "B" lets it be written, then answers.
func lateRaw(late *lateUse) RawHandler {
	return func(_ context.Context, payload []byte, out *Buffer) error {
		switch string(payload) {
		case `"A"`, `"A!"`:
			late.keep(func() (int, error) { return out.Write([]byte("LATE-FROM-A")) })
			if string(payload) == `"A!"` {
				runtime.Goexit()
			}
		default:
			late.next()
		}
		out.B = append(out.B, payload...)
		return nil
	}
}

// TestLateRawBuffer: a RawHandler that keeps out, and returns or calls
// runtime.Goexit, and writes to out once the next invocation has begun
// never reaches that invocation's answer, served at N=1 (the slot's
// buffer) and through NewHandler (a pool shared by every Invoke).
func TestLateRawBuffer(t *testing.T) {
	for _, a := range []string{`"A"`, `"A!"`} {
		t.Run("runtime N=1 "+a, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			late := newLateUse()
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, lateRaw(late))
			if r := invoke(t, api, a); (a == `"A"`) != (r.Err == nil) {
				t.Errorf("%s answered %q, err %+v", a, r.Body, r.Err)
			}
			if r := invoke(t, api, `"B"`); r.Err != nil || string(r.Body) != `"B"` {
				t.Errorf("B answered %q, err %+v", r.Body, r.Err)
			}
			late.check(t, nil)
		})
	}
	t.Run("NewHandler", func(t *testing.T) {
		late := newLateUse()
		h := NewHandler(lateRaw(late))
		for _, p := range []string{`"A"`, `"B"`} {
			if b, err := h.Invoke(context.Background(), []byte(p)); err != nil || string(b) != p {
				t.Errorf("%s answered %q, %v", p, b, err)
			}
		}
		late.check(t, nil)
	})
	t.Run("InvokeStream", func(t *testing.T) {
		late := newLateUse()
		h := NewHandler(lateRaw(late)).(StreamInvoker)
		for _, p := range []string{`"A"`, `"B"`} {
			if _, b, body, err := h.InvokeStream(context.Background(), []byte(p)); err != nil || body != nil || string(b) != p {
				t.Errorf("%s answered %q, %v", p, b, err)
			}
		}
		late.check(t, nil)
	})
}

// strayWriterTo writes its ID, and leaves a goroutine writing it for as
// long as the writer takes it.
type strayWriterTo struct {
	id     string
	strays *sync.WaitGroup
	t      *testing.T
}

func (strayWriterTo) Read([]byte) (int, error) { panic("written out, not read") }

func (b strayWriterTo) WriteTo(w io.Writer) (int64, error) {
	b.strays.Go(func() {
		for range 1000 {
			if _, err := io.WriteString(w, b.id); err != nil {
				if !errors.Is(err, ErrInvocationEnded) {
					b.t.Errorf("stray %s: %v", b.id, err)
				}
				return
			}
		}
	})
	n, err := io.WriteString(w, b.id)
	return int64(n), err
}

// TestStrayStreamWriterRacesEnd: at N=1, each streamed io.WriterTo leaves
// a goroutine writing its ID, racing with the end of its WriteTo: each
// stream holds only its own IDs.
func TestStrayStreamWriterRacesEnd(t *testing.T) {
	var strays sync.WaitGroup
	defer strays.Wait()
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(_ context.Context, id string) (io.Reader, error) {
		return strayWriterTo{id: id + ";", strays: &strays, t: t}, nil
	})
	for i := range 50 {
		r := invoke(t, api, fmt.Sprintf(`"%d"`, i))
		for id := range strings.SplitSeq(strings.TrimSuffix(string(r.Body), ";"), ";") {
			if r.Err != nil || id != fmt.Sprint(i) {
				t.Fatalf("invocation %d answered %q, err %+v", i, r.Body, r.Err)
			}
		}
	}
}

// teeWriterTo copies "ab" into the writer through ReadFrom, from a reader
// that writes what it reads into the same writer.
type teeWriterTo struct{}

func (teeWriterTo) Read([]byte) (int, error) { panic("written out, not read") }

func (teeWriterTo) WriteTo(w io.Writer) (int64, error) {
	return w.(io.ReaderFrom).ReadFrom(io.TeeReader(strings.NewReader("ab"), w))
}

// TestStreamWriterReentrant: a reader that ReadFrom reads may write to
// the same writer: its Read runs outside the writer's lock.
func TestStreamWriterReentrant(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(context.Context) (io.Reader, error) {
		return teeWriterTo{}, nil
	})
	if r := invoke(t, api, `{}`); r.Err != nil || string(r.Body) != "abab" {
		t.Fatalf("answered %q, err %+v; want \"abab\"", r.Body, r.Err)
	}
}
