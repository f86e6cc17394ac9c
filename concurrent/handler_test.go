package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/handlertrace"
	"github.com/aws/aws-lambda-go/lambda/messages"
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
