package rapi

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every error returned by this package wraps at most one of
// them, plus the network error for transport failures. So callers decide
// with errors.Is. Messages carry no "rapi:" prefix because
// every returned error is already wrapped as "rapi: <op>: ...".
var (
	// errBadRequest: the Runtime API answered 400 (unknown request ID, or
	// a response was already sent). The invocation is over; keep running.
	errBadRequest = errors.New("bad request (400)")
	// errForbidden: the Runtime API answered 403 (call not allowed in the
	// current state, for example a second init error).
	errForbidden = errors.New("forbidden (403)")
	// errGone: the Runtime API answered 410: the invocation already timed
	// out.
	errGone = errors.New("invocation gone (410)")
	// errTooLarge: the Runtime API answered 413: the body sent was too
	// large.
	errTooLarge = errors.New("request too large (413)")
	// ErrRuntimeAPI: the Runtime API answered 5xx: the environment is broken
	// and the process should exit promptly.
	ErrRuntimeAPI = errors.New("runtime API failure (5xx)")
	// ErrTransport: dial, write or read failed (reset, EOF mid-response). The
	// Conn has dropped its connection and redials on its next call.
	ErrTransport = errors.New("transport failure")
	// ErrNoReply: Conn.CutReply cut the wait for the reply to a post, whose
	// head had not come whole. Wrapped with ErrTransport.
	ErrNoReply = errors.New("no reply in time: the wait for it was cut")
	// errMalformed: the response broke HTTP/1.1 framing or the limits of this
	// package (status line, headers, chunk framing). Or a /next response had
	// no usable request ID. Also wrapped by Invocation.DeadlineErr.
	errMalformed = errors.New("malformed response")
	// ErrPayloadTooLarge: a /next body was larger than MaxRequestBytes. The
	// Invocation's headers are filled, so the caller can Fail it.
	ErrPayloadTooLarge = errors.New("invocation payload too large")
	// ErrInvalid: an argument (address, option, request ID, header value) is
	// not acceptable. Nothing was sent.
	ErrInvalid = errors.New("invalid argument")
	// errClosed: the Conn was closed by Close.
	errClosed = errors.New("connection closed")
)

// StatusError is a complete response whose status code is not 2xx. The
// connection stays usable when the response was well framed.
type StatusError struct {
	Op   string // "next", "response", "error" or "init/error"
	Code int    // HTTP status code
	Body []byte // start of the response body, at most 4 KiB
}

// maxStatusBody bounds StatusError.Body.
const maxStatusBody = 4 << 10

// Error names the call and the status, and quotes the start of the body.
func (e *StatusError) Error() string {
	msg := "rapi: " + e.Op + ": status " + strconv.Itoa(e.Code)
	if len(e.Body) > 0 {
		b := e.Body
		if len(b) > 256 {
			b = b[:256]
		}
		msg += ": " + strconv.Quote(string(b))
	}
	return msg
}

// Is reports whether a 5xx matches ErrRuntimeAPI. Code tells the other
// statuses apart.
func (e *StatusError) Is(target error) bool {
	switch target {
	case errBadRequest:
		return e.Code == 400
	case errForbidden:
		return e.Code == 403
	case errGone:
		return e.Code == 410
	case errTooLarge:
		return e.Code == 413
	case ErrRuntimeAPI:
		return e.Code >= 500 && e.Code <= 599
	}
	return false
}

// AnswerError is the error Next returns when pipelining (queue) left it the
// answer to the post before it. That answer was not a success, or could not
// be read. Err is what Respond or Fail would have returned. When the
// connection is intact, the poll queued behind the post is still there:
// the next Next reads it.
//
// Resent says that the connection ended before any byte of the answer. Err is
// then the answer to the same post, sent once more, alone, on a new
// connection. A 400 or 410 then most likely means that the Runtime API had
// taken the first one. When CutReply cut the wait for the first answer, Err
// wraps ErrNoReply, then what became of the post sent again: it is
// returned even when that one was accepted.
type AnswerError struct {
	Op     string // response or error
	Err    error
	Resent bool
}

// Error says which answer it was, and what became of it.
func (e *AnswerError) Error() string {
	return "rapi: the answer to the last " + e.Op + ", read with the next poll: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *AnswerError) Unwrap() error { return e.Err }
