package concurrent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

type ebNilDeref struct{ msg *string }

func (e *ebNilDeref) Error() string { return *e.msg }

type ebNamedString string

func (e ebNamedString) Error() string { return string(e) }

// Bodies of returned errors are the ones aws-lambda-go sends.
func TestWriteErrorBody(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantType string
	}{
		{"errors.New", errors.New("plain"), "errorString"},
		{"value type", compatValueError{"value"}, "compatValueError"},
		{"pointer type", &compatPtrError{"pointer"}, "compatPtrError"},
		{"named string", ebNamedString("named"), "ebNamedString"},
		{"wrapped", fmt.Errorf("ctx: %w", io.EOF), "wrapError"},
		{"joined", errors.Join(io.EOF, io.ErrClosedPipe), "joinError"},
		{"escaped", errors.New("<b>\"q\" & \\ \n\t\x00\x1f \u2028\u2029 \xff\xfe é 😀"), "errorString"},
		{"empty", errors.New(""), "errorString"},
		{"InvokeResponse_Error", messages.InvokeResponse_Error{
			Message: "as is <&>", Type: "Given.Type", ShouldExit: true,
			StackTrace: []*messages.InvokeResponse_Error_StackFrame{{Path: "p.go", Line: -1, Label: "<l>"}, nil},
		}, "Given.Type"},
		{"*InvokeResponse_Error", &messages.InvokeResponse_Error{Message: "by pointer", Type: "Ignored"}, "InvokeResponse_Error"},
		{"wrapped InvokeResponse_Error", fmt.Errorf("w: %w", messages.InvokeResponse_Error{Type: "T"}), "wrapError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := new(Buffer)
			gotType := writeErrorBody(out, tt.err)
			want, wantType := awsErrorBody(t, tt.err)
			if gotType != tt.wantType || wantType != tt.wantType {
				t.Errorf("error type %q, aws-lambda-go %q, want %q", gotType, wantType, tt.wantType)
			}
			if !bytes.Equal(out.B, want) {
				t.Errorf("body\n got %s\nwant %s", out.B, want)
			}
		})
	}
}

func TestWriteErrorBodyPanics(t *testing.T) {
	stack := func() []uintptr {
		pcs := make([]uintptr, 8)
		return pcs[:runtime.Callers(1, pcs)]
	}()
	tests := []struct {
		name string
		err  *PanicError
		want string
	}{
		{"string", &PanicError{Value: "boom <&>"}, `{"errorMessage":"boom \u003c\u0026\u003e","errorType":"string"}`},
		{"int", &PanicError{Value: 42}, `{"errorMessage":"42","errorType":"int"}`},
		{"error", &PanicError{Value: &compatPtrError{"p"}}, `{"errorMessage":"p","errorType":"compatPtrError"}`},
		{"struct", &PanicError{Value: struct{ A int }{1}}, `{"errorMessage":"{1}","errorType":""}`},
		{"InvokeResponse_Error", &PanicError{Value: messages.InvokeResponse_Error{Message: "m", Type: "T"}, Stack: stack},
			`{"errorMessage":"m","errorType":"T"}`},
		{"stack before gopanic only", &PanicError{Value: "x", Stack: stack}, `{"errorMessage":"x","errorType":"string","stackTrace":[`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := new(Buffer)
			typ := writeErrorBody(out, tt.err)
			if !strings.HasPrefix(out.String(), tt.want) || (!strings.HasSuffix(tt.want, "[") && out.String() != tt.want) {
				t.Errorf("body %s, want %s", out.B, tt.want)
			}
			var body messages.InvokeResponse_Error
			if err := json.Unmarshal(out.B, &body); err != nil || body.Type != typ {
				t.Errorf("body %s (%v) does not carry error type %q", out.B, err, typ)
			}
		})
	}
}

// An Error method that panics is reported as that panic.
func TestWriteErrorBodyErrorPanics(t *testing.T) {
	out := new(Buffer)
	typ := writeErrorBody(out, &ebNilDeref{})
	var body messages.InvokeResponse_Error
	if err := json.Unmarshal(out.B, &body); err != nil {
		t.Fatal(err)
	}
	if typ != "errorString" || body.Type != typ ||
		body.Message != "runtime error: invalid memory address or nil pointer dereference" {
		t.Errorf("error type %q, body %s", typ, out.B)
	}
	// Past the runtime's own frames (panicmem, sigpanic), as in a Go traceback.
	frames := body.StackTrace
	for len(frames) > 0 && strings.HasPrefix(frames[0].Path, "runtime/") {
		frames = frames[1:]
	}
	if len(frames) == 0 || frames[0].Label != "(*ebNilDeref).Error" ||
		!strings.HasSuffix(frames[0].Path, "errorbody_test.go") {
		t.Errorf("stack %s does not start in the Error method", out.B)
	}
}

func TestWriteErrorBodyNil(t *testing.T) {
	out := new(Buffer)
	if typ := writeErrorBody(out, nil); typ != "" || out.String() != `{"errorMessage":"\u003cnil\u003e","errorType":""}` {
		t.Errorf("nil error: %q, %s", typ, out.B)
	}
}

// A panic raised while another unwinds reports the newer panic, from the
// frame that raised it.
func TestStackTraceNestedPanic(t *testing.T) {
	h, err := newHandler(func() {
		defer func() { panic("second") }()
		panic("first")
	}, handlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out := new(Buffer)
	_, err = h.call(t.Context(), nil, out)
	writeErrorBody(out, err)
	var body messages.InvokeResponse_Error
	if err := json.Unmarshal(out.B, &body); err != nil {
		t.Fatal(err)
	}
	if body.Message != "second" {
		t.Errorf("message %q", body.Message)
	}
	if len(body.StackTrace) == 0 || body.StackTrace[0].Label != "TestStackTraceNestedPanic.func1.1" {
		t.Errorf("stack %s does not start at the second panic", out.B)
	}
}

// FuzzWriteErrorBody: any message is encoded as json.Marshal encodes it.
func FuzzWriteErrorBody(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\u2028\u2029", "\xff", "\x00\x7f", `"\`, "é😀"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, msg, typ string) {
		for _, err := range []error{errors.New(msg), messages.InvokeResponse_Error{Message: msg, Type: typ}} {
			out := new(Buffer)
			gotType := writeErrorBody(out, err)
			want, wantType := awsErrorBody(t, err)
			if !bytes.Equal(out.B, want) || gotType != wantType {
				t.Errorf("body %s (%q), want %s (%q)", out.B, gotType, want, wantType)
			}
		}
	})
}
