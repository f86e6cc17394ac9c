// Package errordoc writes the error document of an /error, as
// aws-lambda-go writes it, and cuts one that is too large to fit.
package errordoc

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/valyala/bytebufferpool"
)

// Encode encodes body into out as json.Marshal does, HTML
// escaping included, and returns its error type.
func Encode(out *bytebufferpool.ByteBuffer, body *messages.InvokeResponse_Error) string {
	// Strings, an int32 and a slice of those: encoding cannot fail.
	_ = json.NewEncoder(out).Encode(body)
	out.B = out.B[:len(out.B)-1] // the encoder's newline
	return body.Type
}

// TypeName names the type of v the way Lambda error types are named: a
// pointer by the type it points to; "" for unnamed types.
func TypeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return ""
	}
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}

// StackTrace turns the program counters of a panic into Lambda stack
// frames, at most limit, starting at the function that panicked: the
// frames up to runtime.gopanic are the recovering ones.
func StackTrace(pcs []uintptr, limit int) []*messages.InvokeResponse_Error_StackFrame {
	if len(pcs) == 0 {
		return nil
	}
	frames := make([]*messages.InvokeResponse_Error_StackFrame, 0, min(len(pcs), limit))
	it := runtime.CallersFrames(pcs)
	panicking := false
	for {
		f, more := it.Next()
		// Only the first gopanic: under a panic raised by a deferred call
		// the older panic's frames stay.
		if !panicking && f.Function == "runtime.gopanic" {
			frames, panicking = frames[:0], true
		} else if len(frames) < limit {
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

// Fit cuts the error document in out, over limit bytes, to fit: without
// the stack trace, the type cut to maxType, and the message cut (marked
// "...") as little as needed.
func Fit(out *bytebufferpool.ByteBuffer, limit, maxType int) {
	var doc messages.InvokeResponse_Error
	_ = json.Unmarshal(out.B, &doc) // a document Encode wrote
	doc.StackTrace = nil
	doc.Type = CutUTF8(doc.Type, maxType)
	msg := doc.Message
	fits := func(n int) bool { // the message cut to n bytes fits
		doc.Message = msg
		if n < len(msg) {
			doc.Message = CutUTF8(msg, n) + "..."
		}
		out.Reset()
		Encode(out, &doc)
		return len(out.B) <= limit
	}
	// The longest cut that fits, found by interpolating the encoded length
	// between a cut that fits and one that does not: escaping makes it grow
	// unevenly, but a few encodings get within bytes of it. (A binary search
	// encoded a large message some twenty times, which for a 2 MiB message
	// took seconds under the race detector.)
	if fits(len(msg)) {
		return
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
}

// CutUTF8 is s cut to at most n bytes, on a character.
func CutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
