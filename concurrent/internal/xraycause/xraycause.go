// Package xraycause makes the X-Ray error cause of an error document.
package xraycause

import (
	"bytes"
	"encoding/json"
	"os"

	"github.com/lmigo/lmigo/concurrent/internal/logline"
)

// The X-Ray error cause: every /error carries
// Lambda-Runtime-Function-XRay-Error-Cause, a JSON document that Lambda
// adds to the invocation's trace when tracing is active, in the shape
// aws-lambda-go v1.55.1 sends (invoke_loop.go, makeXRayError):
//
//	{"working_directory":W,"exceptions":[{"type":T,"message":M,"stack":S}],"paths":P}
//
// T, M and S are the error document's errorType, errorMessage and
// stackTrace ([] when it has none), P the distinct paths of S in their
// first order, W the working directory when the error is posted. It is
// made of the document's own encoded values, so it is byte for byte what
// aws-lambda-go sends for the same error, with two exceptions:
//
//   - a DEL byte, which JSON leaves as it is and no header may carry, is
//     written \u007f (aws-lambda-go's post then fails, and the process
//     exits without reporting the error);
//   - a cause of Max or more, which aws-lambda-go leaves out, is
//     sent cut to MaxCut: the type, the start of the message,
//     no stack, so that the trace still names the exception; so is a
//     shorter one that would not fit the answer's header beside long
//     request and invocation IDs (concurrent's xrayCauseLimit).
//
// Only an error is charged for it: the cause is appended behind the
// document in the slot's response buffer.
const (
	// Max bounds a cause: the Runtime API takes a cause under 1 MiB (LMI.md;
	// aws-lambda-go's xrayErrorCauseMaxSize, rapi's bound), and Go's HTTP
	// server, the emulator's, reads at most 1 MiB + 4 KiB of headers
	// (DefaultMaxHeaderBytes plus its slop), which leaves the answer's
	// other headers room.
	Max = 1 << 20
	// MaxCut is what the emulator keeps of a cause
	// (rapi/model/error_cause.go, MaxErrorCauseSizeBytes): it crops a
	// longer one itself.
	MaxCut = 64 << 10
)

// errorDocParts are the encoded values of an error document.
type errorDocParts struct {
	Message    json.RawMessage `json:"errorMessage"`
	Type       json.RawMessage `json:"errorType"`
	StackTrace json.RawMessage `json:"stackTrace"`
}

// maxType bounds the type and the working directory in a cut cause, as
// the runtime bounds an error type inside a stream trailer's document.
const maxType = 256

// Append appends the X-Ray cause of the error document doc to
// dst, shorter than limit (at most Max). doc may be a prefix of
// dst: it is read before dst grows past it.
func Append(dst, doc []byte, limit int) []byte {
	var parts errorDocParts
	if json.Unmarshal(doc, &parts) != nil || parts.Message == nil || parts.Type == nil {
		return dst
	}
	wd, _ := os.Getwd() // aws-lambda-go sends "" when it fails
	wdJSON, _ := json.Marshal(wd)
	var stack []struct {
		Path json.RawMessage `json:"path"`
	}
	if parts.StackTrace != nil {
		_ = json.Unmarshal(parts.StackTrace, &stack)
	} else {
		parts.StackTrace = json.RawMessage("[]")
	}

	start := len(dst)
	dst = append(dst, `{"working_directory":`...)
	dst = appendNoDEL(dst, wdJSON)
	dst = append(dst, `,"exceptions":[{"type":`...)
	dst = appendNoDEL(dst, parts.Type)
	dst = append(dst, `,"message":`...)
	dst = appendNoDEL(dst, parts.Message)
	dst = append(dst, `,"stack":`...)
	dst = appendNoDEL(dst, parts.StackTrace)
	dst = append(dst, `}],"paths":[`...)
	// Paths are told apart by their encoding, which is the same for equal
	// strings (aws-lambda-go compares the strings: two paths that differ
	// only in invalid UTF-8 encode alike and are listed once here).
	seen := make(map[string]struct{}, len(stack))
	for _, f := range stack {
		if f.Path == nil {
			continue // a null frame, which aws-lambda-go cannot report at all
		}
		if _, ok := seen[string(f.Path)]; ok {
			continue
		}
		seen[string(f.Path)] = struct{}{}
		if len(seen) > 1 {
			dst = append(dst, ',')
		}
		dst = appendNoDEL(dst, f.Path)
	}
	dst = append(dst, "]}"...)
	if len(dst)-start < limit {
		return dst
	}

	// Too large to send: the type and what fits of the message, no stack.
	dst = dst[:start]
	dst = append(dst, `{"working_directory":`...)
	dst = append(dst, cutJSONToken(appendNoDEL(nil, wdJSON), maxType)...)
	dst = append(dst, `,"exceptions":[{"type":`...)
	dst = append(dst, cutJSONToken(appendNoDEL(nil, parts.Type), maxType)...)
	dst = append(dst, `,"message":`...)
	const tail = `,"stack":[]}],"paths":[]}`
	room := min(MaxCut, limit-1) - (len(dst) - start) - len(tail)
	dst = append(dst, cutJSONToken(appendNoDEL(nil, parts.Message), room)...)
	return append(dst, tail...)
}

// appendNoDEL appends the JSON value v to dst with every DEL byte, which
// can only be inside a string, escaped.
func appendNoDEL(dst, v []byte) []byte {
	for {
		i := bytes.IndexByte(v, 0x7f)
		if i < 0 {
			return append(dst, v...)
		}
		dst = append(dst, v[:i]...)
		dst = append(dst, `\u007f`...)
		v = v[i+1:]
	}
}

// cutJSONToken returns the JSON string t (quotes included) cut to at
// most limit bytes, on a character and not inside an escape, and marked
// "..." when cut.
func cutJSONToken(t []byte, limit int) []byte {
	if len(t) <= limit || len(t) < 2 {
		return t
	}
	const mark = `..."`
	keep := logline.CutJSONString(t[1:len(t)-1], max(limit-1-len(mark), 0))
	return append(t[:1+keep:1+keep], mark...)
}
