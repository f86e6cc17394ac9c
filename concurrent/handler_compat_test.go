package concurrent

// Byte-for-byte comparison of the handler adapter with aws-lambda-go
// v1.55.1: for each handler form and payload, the response (or the error
// body) lmigo produces must equal what lambda.NewHandler(f).Invoke returns
// (or the body aws-lambda-go builds from the error it returns).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

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
