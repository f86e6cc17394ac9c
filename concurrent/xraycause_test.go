package concurrent

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/lmigo/lmigo/concurrent/internal/errordoc"
	"github.com/lmigo/lmigo/rapi"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// xrayDoc is the X-Ray error cause as aws-lambda-go v1.55.1 builds it
// (invoke_loop.go, makeXRayError), re-created here as the reference.
type xrayDoc struct {
	WorkingDirectory string          `json:"working_directory"`
	Exceptions       []xrayException `json:"exceptions"`
	Paths            []string        `json:"paths"`
}

type xrayException struct {
	Type    string                                      `json:"type"`
	Message string                                      `json:"message"`
	Stack   []*messages.InvokeResponse_Error_StackFrame `json:"stack"`
}

// wantXRayCause is the cause aws-lambda-go sends for doc.
func wantXRayCause(t *testing.T, doc messages.InvokeResponse_Error) string {
	t.Helper()
	wd, _ := os.Getwd()
	x := xrayDoc{WorkingDirectory: wd, Paths: []string{}}
	seen := map[string]bool{}
	for _, f := range doc.StackTrace {
		// aws-lambda-go dereferences a nil frame, and its process dies.
		if f != nil && !seen[f.Path] {
			seen[f.Path] = true
			x.Paths = append(x.Paths, f.Path)
		}
	}
	stack := doc.StackTrace
	if stack == nil {
		stack = []*messages.InvokeResponse_Error_StackFrame{}
	}
	x.Exceptions = []xrayException{{Type: doc.Type, Message: doc.Message, Stack: stack}}
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func frames(pl ...any) []*messages.InvokeResponse_Error_StackFrame {
	var fs []*messages.InvokeResponse_Error_StackFrame
	for i := 0; i < len(pl); i += 3 {
		fs = append(fs, &messages.InvokeResponse_Error_StackFrame{Path: pl[i].(string), Line: int32(pl[i+1].(int)), Label: pl[i+2].(string)})
	}
	return fs
}

// TestXRayCause checks that every /error carries
// Lambda-Runtime-Function-XRay-Error-Cause as aws-lambda-go sends it: the
// working directory, the exception's type, message and stack, the
// distinct paths of the stack, byte for byte; and a DEL byte escaped, so
// that the header stays valid.
func TestXRayCause(t *testing.T) {
	ive := func(typ, msg string, st []*messages.InvokeResponse_Error_StackFrame) *messages.InvokeResponse_Error {
		return &messages.InvokeResponse_Error{Type: typ, Message: msg, StackTrace: st}
	}
	fails := func(err error) any { return func() error { return err } }
	// A message that makes the cause 1 MiB - 1 bytes, the most sent.
	long := strings.Repeat("a", maxXRayCause-1-len(wantXRayCause(t, messages.InvokeResponse_Error{Type: "errorString"})))
	tests := []struct {
		name    string
		handler any
		req     rapitest.Request
		// want is the document the cause is made of; nil: the one posted.
		want *messages.InvokeResponse_Error
	}{
		{"errorString", fails(errors.New("barf")), rapitest.Request{}, ive("errorString", "barf", nil)},
		{"two frames", fails(*ive("yoloError", "hello yolo", frames("yolo", 2, "yolo", "hello/hello", 12, "hi"))), rapitest.Request{},
			ive("yoloError", "hello yolo", frames("yolo", 2, "yolo", "hello/hello", 12, "hi"))},
		{"paths once each, in order", fails(*ive("yoloError", "hello yolo", frames("hello/hello", 12, "hi", "hello/hello", 13, "hihi", "yolo", 2, "yolo", "hello/hello", 14, "hi"))), rapitest.Request{},
			ive("yoloError", "hello yolo", frames("hello/hello", 12, "hi", "hello/hello", 13, "hihi", "yolo", 2, "yolo", "hello/hello", 14, "hi"))},
		{"empty stack", fails(*ive("yoloError", "hello yolo", []*messages.InvokeResponse_Error_StackFrame{})), rapitest.Request{}, ive("yoloError", "hello yolo", nil)},
		{"null frame", fails(*ive("T", "m", []*messages.InvokeResponse_Error_StackFrame{nil, {Path: "p"}})), rapitest.Request{}, nil},
		{"escaped", fails(errors.New("<a&b> \u2028 \x01 \"q\" \\")), rapitest.Request{}, ive("errorString", "<a&b> \u2028 \x01 \"q\" \\", nil)},
		{"invalid UTF-8", fails(errors.New("bad \xff\xfe end")), rapitest.Request{}, ive("errorString", "bad \xff\xfe end", nil)},
		{"DEL", fails(errors.New("del \x7f end")), rapitest.Request{}, ive("errorString", "del \x7f end", nil)},
		{"1 MiB - 1", fails(errors.New(long)), rapitest.Request{}, ive("errorString", long, nil)},
		{"pointer type", fails(&compatPtrError{"ptr"}), rapitest.Request{}, ive("compatPtrError", "ptr", nil)},
		{"panic", func() error { panic("boom \x7f") }, rapitest.Request{}, nil},
		{"event that does not decode", func(struct{ N int }) error { return nil }, rapitest.Request{Payload: []byte(`{"N":"x"}`)}, nil},
		{"runtime's own error", func() error { return nil }, rapitest.Request{Payload: []byte(`{}`), ClientContext: "{not json"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{Queue: true})
			serve(t, api, env{}, tt.handler)
			r := invokeReq(t, api, tt.req)
			if r.Err == nil {
				t.Fatalf("no error: %s", r.Body)
			}
			doc := tt.want
			if doc == nil {
				doc = new(messages.InvokeResponse_Error)
				if err := json.Unmarshal(r.Err.Body, doc); err != nil {
					t.Fatal(err)
				}
			}
			want := strings.ReplaceAll(wantXRayCause(t, *doc), "\x7f", `\u007f`)
			if string(r.Err.Cause) != want {
				t.Fatalf("cause\n got %s\nwant %s", r.Err.Cause, want)
			}
		})
	}
}

func invokeReq(t *testing.T, api *rapitest.Server, req rapitest.Request) rapitest.Result {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	r, err := api.Invoke(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestXRayCauseBound checks the cause's bound: under 1 MiB it is sent
// whole, as aws-lambda-go sends it; from 1 MiB, where aws-lambda-go sends
// none, it is cut to what the Runtime API keeps (64 KiB): the type, the
// start of the message, no stack.
func TestXRayCauseBound(t *testing.T) {
	wd, _ := os.Getwd()
	// The message length that makes the whole cause n bytes long.
	msgFor := func(n int) string {
		base := len(wantXRayCause(t, messages.InvokeResponse_Error{Type: "errorString"}))
		return strings.Repeat("a", n-base)
	}
	stack := frames("p/a.go", 1, "f", "p/b.go", 2, "g")
	for _, tt := range []struct {
		name  string
		doc   messages.InvokeResponse_Error
		whole bool
	}{
		{"1 MiB - 1", messages.InvokeResponse_Error{Type: "errorString", Message: msgFor(maxXRayCause - 1)}, true},
		{"1 MiB", messages.InvokeResponse_Error{Type: "errorString", Message: msgFor(maxXRayCause)}, false},
		{"2 MiB of escapes and runes", messages.InvokeResponse_Error{Type: "errorString",
			Message: strings.Repeat("<é\x7f\u2028\x00", 200<<10)}, false},
		{"a long type, a stack", messages.InvokeResponse_Error{Type: strings.Repeat("T", 10_000), Message: strings.Repeat("m", 2<<20),
			StackTrace: stack}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var doc Buffer
			errordoc.Encode(&doc, &tt.doc)
			body, cause := withXRayCause(&doc, &rapi.Invocation{RequestID: "id", InvocationID: "inv"})
			if !bytes.Equal(body, doc.B[:len(body)]) || len(body)+len(cause) != len(doc.B) {
				t.Fatal("the document moved")
			}
			want := strings.ReplaceAll(wantXRayCause(t, tt.doc), "\x7f", `\u007f`)
			if tt.whole {
				if string(cause) != want {
					t.Fatalf("cause of %d bytes, want the whole %d", len(cause), len(want))
				}
				return
			}
			if len(cause) > maxXRayCauseCut || !rapi.ValidHeaderValue(string(cause), maxXRayCauseCut) {
				t.Fatalf("cause of %d bytes, or not a valid header", len(cause))
			}
			var got xrayDoc
			if err := json.Unmarshal(cause, &got); err != nil {
				t.Fatalf("cut cause: %v", err)
			}
			ex := got.Exceptions[0]
			msg := strings.TrimSuffix(ex.Message, "...")
			if got.WorkingDirectory != wd || len(got.Exceptions) != 1 || !strings.HasPrefix(tt.doc.Type, strings.TrimSuffix(ex.Type, "...")) ||
				len(ex.Stack) != 0 || len(got.Paths) != 0 || msg == ex.Message || !strings.HasPrefix(tt.doc.Message, msg) {
				t.Fatalf("cut cause %.200s", cause)
			}
			if len(cause) < maxXRayCauseCut-16 {
				t.Fatalf("cut to %d bytes: more fits", len(cause))
			}
		})
	}
}

// TestXRayCauseLongIDs checks that the cause leaves room in the answer's
// header for long request and invocation IDs: the Runtime API (Go's HTTP
// server, as the emulator's) reads at most 1 MiB + 4 KiB of header, and
// an answer whose header is longer is refused whole (431), leaving its
// invocation unanswered.
func TestXRayCauseLongIDs(t *testing.T) {
	// A cause of 1 MiB - 1: sent whole with IDs of the usual length.
	long := strings.Repeat("a", maxXRayCause-1-len(wantXRayCause(t, messages.InvokeResponse_Error{Type: "errorString"})))
	api := newAPI(t, rapitest.Options{Queue: true})
	serve(t, api, env{}, func() error { return errors.New(long) })
	r := invokeReq(t, api, rapitest.Request{Payload: []byte(`{}`), Timeout: 10 * time.Second,
		Headers: map[string]string{"Lambda-Runtime-Invocation-Id": strings.Repeat("i", 16<<10)}})
	if r.Err == nil || r.Err.Type != "errorString" {
		t.Fatalf("the error was not taken: %+v", r.Err)
	}
	if len(r.Err.Cause) == 0 || len(r.Err.Cause) > maxXRayCauseCut {
		t.Fatalf("cause of %d bytes, want one cut to fit", len(r.Err.Cause))
	}
}
