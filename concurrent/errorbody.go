package concurrent

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

// writeErrorBody writes the JSON body that reports err to the Runtime API
// into out, which must be empty, and returns the error type to send with
// it. The body is the one aws-lambda-go sends for the same error:
//
//   - a messages.InvokeResponse_Error value is sent as it is;
//   - a *PanicError is sent with the panic value's message and type and the
//     panicking stack;
//   - any other error with its message and the name of its type (of the
//     pointed-to type for a pointer).
//
// A panic in err's Error method is reported as a panic, not passed on.
func writeErrorBody(out *Buffer, err error) (errorType string) {
	defer func() {
		if v := recover(); v != nil {
			out.Reset()
			errorType = encodeErrorBody(out, panicBody(newPanicError(v)))
		}
	}()
	return encodeErrorBody(out, errorBody(err))
}

// eventError is an event that did not decode into the handler's type:
// the handler adapter's error to the runtime, which logs it without the
// decoder's message (logMessage) and sends err as aws-lambda-go sends it.
// It never leaves the package: handler.call returns err itself.
type eventError struct {
	err  error
	into reflect.Type
}

func (e *eventError) Error() string { return e.err.Error() }
func (e *eventError) Unwrap() error { return e.err }

// unwrapEvent returns the decoder's error of an eventError, else err.
func unwrapEvent(err error) error {
	if ee, ok := err.(*eventError); ok { //nolint:errorlint // the handler adapter returns it unwrapped
		return ee.err
	}
	return err
}

func errorBody(err error) *messages.InvokeResponse_Error {
	err = unwrapEvent(err)
	// Only the value itself, not one wrapped, is passed through as in
	// aws-lambda-go.
	if ive, ok := err.(messages.InvokeResponse_Error); ok { //nolint:errorlint // see above
		return &ive
	}
	if pe := (*PanicError)(nil); errors.As(err, &pe) {
		return panicBody(pe)
	}
	if err == nil {
		return &messages.InvokeResponse_Error{Message: "<nil>"}
	}
	return &messages.InvokeResponse_Error{Message: err.Error(), Type: typeName(err)}
}

func panicBody(pe *PanicError) *messages.InvokeResponse_Error {
	if ive, ok := pe.Value.(messages.InvokeResponse_Error); ok {
		return &ive
	}
	return &messages.InvokeResponse_Error{
		Message:    fmt.Sprintf("%v", pe.Value),
		Type:       typeName(pe.Value),
		StackTrace: stackTrace(pe.Stack),
	}
}

// encodeErrorBody encodes body into out as json.Marshal does, HTML
// escaping included, and returns its error type.
func encodeErrorBody(out *Buffer, body *messages.InvokeResponse_Error) string {
	// Strings, an int32 and a slice of those: encoding cannot fail.
	_ = json.NewEncoder(out).Encode(body)
	out.B = out.B[:len(out.B)-1] // the encoder's newline
	return body.Type
}

// typeName names the type of v the way Lambda error types are named: a
// pointer by the type it points to; "" for unnamed types.
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return ""
	}
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}

// stackTrace turns the program counters of a panic into Lambda stack
// frames, starting at the function that panicked: the frames up to
// runtime.gopanic are the recovering ones.
func stackTrace(pcs []uintptr) []*messages.InvokeResponse_Error_StackFrame {
	if len(pcs) == 0 {
		return nil
	}
	frames := make([]*messages.InvokeResponse_Error_StackFrame, 0, min(len(pcs), maxPanicFrames))
	it := runtime.CallersFrames(pcs)
	panicking := false
	for {
		f, more := it.Next()
		// Only the first gopanic: under a panic raised by a deferred call
		// the older panic's frames stay.
		if !panicking && f.Function == "runtime.gopanic" {
			frames, panicking = frames[:0], true
		} else if len(frames) < maxPanicFrames {
			frames = append(frames, stackFrame(f))
		}
		if !more {
			return frames
		}
	}
}

// stackFrame formats a frame as aws-lambda-go does: the file path keeps
// as many trailing elements as the function's import path has, plus the
// file (a GOPATH path /home/u/src/pkg/sub/file.go becomes pkg/sub/file.go;
// a path with fewer elements is kept whole), and the label loses the import
// path and the package name.
func stackFrame(f runtime.Frame) *messages.InvokeResponse_Error_StackFrame {
	path, label := f.File, f.Function
	cut := len(path)
	for n := strings.Count(label, "/") + 2; n > 0 && cut >= 0; n-- {
		cut = strings.LastIndexByte(path[:cut], '/')
	}
	path = path[cut+1:]
	label = label[strings.LastIndexByte(label, '/')+1:]
	label = label[strings.IndexByte(label, '.')+1:]
	return &messages.InvokeResponse_Error_StackFrame{Path: path, Line: int32(f.Line), Label: label}
}

// writeErrorDoc writes the error document for err into out, which must be
// empty, and returns the error type. It is writeErrorBody's document when
// that has at most limit bytes (maxErrorBody for an /error,
// rapi.MaxStreamErrorBody for a stream's trailer); otherwise the same
// without the stack trace, the type cut to maxDocErrorType, and the message
// cut (marked "...") as little as needed to fit.
func writeErrorDoc(out *Buffer, err error, limit int) string {
	errorType := writeErrorBody(out, err)
	if len(out.B) <= limit {
		return errorType
	}
	var doc messages.InvokeResponse_Error
	_ = json.Unmarshal(out.B, &doc) // the document writeErrorBody wrote
	doc.StackTrace = nil
	doc.Type = cutUTF8(doc.Type, maxDocErrorType)
	msg := doc.Message
	fits := func(n int) bool { // the message cut to n bytes fits
		doc.Message = msg
		if n < len(msg) {
			doc.Message = cutUTF8(msg, n) + "..."
		}
		out.Reset()
		encodeErrorBody(out, &doc)
		return len(out.B) <= limit
	}
	// The longest cut that fits, found by interpolating the encoded length
	// between a cut that fits and one that does not: escaping makes it grow
	// unevenly, but a few encodings get within bytes of it. (A binary search
	// encoded a large message some twenty times, which for a 2 MiB message
	// took seconds under the race detector.)
	if fits(len(msg)) {
		return errorType
	}
	lo, hi, lenHi := 0, len(msg), len(out.B) // a cut to lo fits, to hi not
	fits(lo)
	lenLo := len(out.B)
	for range 16 {
		if hi-lo <= 1 {
			break
		}
		n := lo + int(int64(hi-lo)*int64(limit-lenLo)/int64(max(lenHi-lenLo, 1)))
		n = min(max(n, lo+1), hi-1)
		if fits(n) {
			lo, lenLo = n, len(out.B)
		} else {
			hi, lenHi = n, len(out.B)
		}
	}
	fits(lo)
	return errorType
}
