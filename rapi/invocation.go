package rapi

import (
	"fmt"
	"time"
)

// Header names of the Runtime API (matched case-insensitively on input).
const (
	hdrRequestID       = "Lambda-Runtime-Aws-Request-Id"
	hdrDeadlineMs      = "Lambda-Runtime-Deadline-Ms"
	hdrFunctionARN     = "Lambda-Runtime-Invoked-Function-Arn"
	hdrTraceID         = "Lambda-Runtime-Trace-Id"
	hdrClientContext   = "Lambda-Runtime-Client-Context"
	hdrCognitoIdentity = "Lambda-Runtime-Cognito-Identity"
	hdrTenantID        = "Lambda-Runtime-Aws-Tenant-Id"
	hdrInvocationID    = "Lambda-Runtime-Invocation-Id"
	hdrContentType     = "Content-Type"
	hdrContentLength   = "Content-Length"
	hdrTransferEnc     = "Transfer-Encoding"
	hdrConnection      = "Connection"
	hdrHost            = "Host"
	hdrUserAgent       = "User-Agent"
	hdrErrorType       = "Lambda-Runtime-Function-Error-Type"
	hdrXRayErrorCause  = "Lambda-Runtime-Function-XRay-Error-Cause"
)

// Invocation is one event from GET /next. Next overwrites every field; the
// caller owns the Invocation (and its Payload) between calls and may reuse it.
// Strings stay valid forever (they are never rewritten in place).
type Invocation struct {
	RequestID    string // Lambda-Runtime-Aws-Request-Id, checked safe for a URL path
	FunctionARN  string // Lambda-Runtime-Invoked-Function-Arn
	TraceID      string // Lambda-Runtime-Trace-Id
	TenantID     string // Lambda-Runtime-Aws-Tenant-Id, "" if absent
	InvocationID string // Lambda-Runtime-Invocation-Id, "" if absent
	ContentType  string // Content-Type of the payload

	// Deadline is DeadlineMs as a time; zero when DeadlineErr is set.
	Deadline time.Time
	// DeadlineMs is Lambda-Runtime-Deadline-Ms (Unix epoch milliseconds), 0 if bad.
	DeadlineMs int64
	// DeadlineErr is nil when the deadline header was present and a
	// positive integer whose nanoseconds fit in int64 (up to April 2262).
	// Otherwise it says what is wrong with it. Next does not fail for it:
	// the caller decides what a missing deadline means.
	DeadlineErr error

	ClientContext   string // raw JSON header, "" if absent
	CognitoIdentity string // raw JSON header, "" if absent

	// Payload is the body. Next reads into Payload[:0], growing it only when
	// its capacity is too small; the caller keeps ownership of the slice.
	Payload []byte
}

var errNoDeadline = fmt.Errorf("%w: no %s header", errMalformed, hdrDeadlineMs)

func (inv *Invocation) reset() {
	p := inv.Payload[:0]
	*inv = Invocation{} // cleared in place: no copy of the struct on the stack (Next's frame)
	inv.Payload, inv.DeadlineErr = p, errNoDeadline
}
