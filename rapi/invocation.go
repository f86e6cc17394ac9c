package rapi

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	// positive integer whose nanoseconds fit in int64 (up to April 2262);
	// otherwise it says what is wrong with it. Next does not fail for it:
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

// readNext reads the invocation whose answer has begun.
//
//go:noinline
func (c *Conn) readNext(ctx context.Context, inv *Invocation) error {
	// The answer has begun: the rest of it must not stall (see CutIfStalled).
	c.beginAnswer()
	defer c.endAnswer()
	c.hdrs.start(inv, &c.in)
	h, err := readHead(c.br, &c.spill, &defaultLimits, &c.hdrs)
	if err != nil {
		c.resetKeepingID(inv)
		return c.fail(ctx, opNext, err)
	}
	c.body.init(c.br, &c.spill, h, &defaultLimits)
	if h.code/100 != 2 {
		inv.reset()
		return c.status(opNext, h)
	}
	if err := c.hdrs.finish(); err != nil {
		inv.reset() // nothing that can be answered
		return c.skip(opNext, h, maxDiscardPayload, fmt.Errorf("rapi: %s: %w", opNext, err))
	}
	p, err := c.body.readAll(inv.Payload, c.c.opts.MaxRequestBytes)
	switch {
	case errors.Is(err, errBodyTooLarge):
		inv.Payload = p[:0]
		return c.skip(opNext, h, maxDiscardPayload, fmt.Errorf("rapi: %s: %w: request %s: body over %d bytes",
			opNext, ErrPayloadTooLarge, inv.RequestID, c.c.opts.MaxRequestBytes))
	case err != nil:
		c.resetKeepingID(inv)
		return c.fail(ctx, opNext, err)
	}
	inv.Payload = p
	c.end(h)
	return nil
}

// resetKeepingID empties inv after an answer failed, keeping its request
// ID when one had been read and is safe to post to (the invocation was
// handed out, and only the runtime can still end it before its deadline),
// and its invocation ID if read too, so that the error answer echoes it.
func (c *Conn) resetKeepingID(inv *Invocation) {
	id, invID := inv.RequestID, inv.InvocationID
	if id == "" {
		id, invID = c.hdrs.requestID(), c.hdrs.gathered(fInvocationID)
	}
	inv.reset()
	inv.RequestID = id
	if id != "" {
		inv.InvocationID = invID
	}
}

// Fields whose values are new for every invocation. They are gathered into
// one scratch buffer and turned into strings with a single allocation.
const (
	fRequestID = iota
	fTraceID
	fInvocationID
	fClientContext
	fCognitoIdentity
	nFresh
)

// Bits of nextHeaders.seen, for duplicate detection.
const (
	seenARN = 1 << (nFresh + iota)
	seenTenant
	seenContentType
	seenDeadline
)

// intern keeps the last value of headers that rarely change between
// invocations, so that an unchanged value costs no allocation.
type intern struct {
	arn, tenant, contentType string
}

func (in *intern) get(slot *string, v []byte) string {
	if string(v) != *slot { // compiles to a comparison without allocation
		*slot = string(v)
	}
	return *slot
}

// maxRetainedStrs bounds the scratch kept between invocations.
const maxRetainedStrs = 16 << 10

// nextHeaders parses the headers of a 2xx /next answer into an Invocation.
type nextHeaders struct {
	inv   *Invocation
	in    *intern
	strs  []byte
	spans [nFresh]struct{ off, end int }
	seen  uint32
}

func (s *nextHeaders) start(inv *Invocation, in *intern) {
	s.inv, s.in = inv, in
	s.strs = s.strs[:0]
	s.seen = 0
}

func (s *nextHeaders) dup(bit uint32, name string) error {
	if s.seen&bit != 0 {
		return fmt.Errorf("%w: repeated %s header", errMalformed, name)
	}
	s.seen |= bit
	return nil
}

func (s *nextHeaders) fresh(f int, name string, v []byte) error {
	if err := s.dup(1<<f, name); err != nil {
		return err
	}
	s.spans[f].off = len(s.strs)
	s.strs = append(s.strs, v...)
	s.spans[f].end = len(s.strs)
	return nil
}

// header handles one header of the response; unknown names are ignored.
func (s *nextHeaders) header(name, v []byte) error {
	switch len(name) {
	case len(hdrRequestID): // == len(hdrClientContext)
		if equalFold(name, hdrRequestID) {
			return s.fresh(fRequestID, hdrRequestID, v)
		}
		if equalFold(name, hdrClientContext) {
			return s.fresh(fClientContext, hdrClientContext, v)
		}
	case len(hdrTraceID):
		if equalFold(name, hdrTraceID) {
			return s.fresh(fTraceID, hdrTraceID, v)
		}
	case len(hdrInvocationID): // == len(hdrTenantID)
		if equalFold(name, hdrInvocationID) {
			return s.fresh(fInvocationID, hdrInvocationID, v)
		}
		if equalFold(name, hdrTenantID) {
			if err := s.dup(seenTenant, hdrTenantID); err != nil {
				return err
			}
			s.inv.TenantID = s.in.get(&s.in.tenant, v)
		}
	case len(hdrCognitoIdentity):
		if equalFold(name, hdrCognitoIdentity) {
			return s.fresh(fCognitoIdentity, hdrCognitoIdentity, v)
		}
	case len(hdrFunctionARN):
		if equalFold(name, hdrFunctionARN) {
			if err := s.dup(seenARN, hdrFunctionARN); err != nil {
				return err
			}
			s.inv.FunctionARN = s.in.get(&s.in.arn, v)
		}
	case len(hdrContentType):
		if equalFold(name, hdrContentType) {
			if err := s.dup(seenContentType, hdrContentType); err != nil {
				return err
			}
			s.inv.ContentType = s.in.get(&s.in.contentType, v)
		}
	case len(hdrDeadlineMs):
		if equalFold(name, hdrDeadlineMs) {
			if err := s.dup(seenDeadline, hdrDeadlineMs); err != nil {
				return err
			}
			s.deadline(v)
		}
	}
	return nil
}

// maxDeadlineMs is the last millisecond whose Unix nanoseconds fit in int64
// (April 2262). Past it, UnixNano and the arithmetic built on it wrap to 1677,
// so a later deadline is as unusable as a non-numeric one.
const maxDeadlineMs = math.MaxInt64 / int64(time.Millisecond)

func (s *nextHeaders) deadline(v []byte) {
	ms, ok := parseDecimal(v)
	if !ok || ms <= 0 || ms > maxDeadlineMs {
		s.inv.DeadlineErr = fmt.Errorf("%w: bad %s %q", errMalformed, hdrDeadlineMs, clip(v))
		return
	}
	s.inv.DeadlineMs = ms
	s.inv.Deadline = time.UnixMilli(ms)
	s.inv.DeadlineErr = nil
}

var errNoRequestID = fmt.Errorf("%w: no %s header", errMalformed, hdrRequestID)

// finish turns the gathered values into strings (one allocation) and checks
// the request ID, without which the invocation cannot be answered.
func (s *nextHeaders) finish() error {
	if len(s.strs) > 0 {
		block := string(s.strs)
		for f := range nFresh {
			if s.seen&(1<<f) == 0 {
				continue
			}
			v := block[s.spans[f].off:s.spans[f].end]
			switch f {
			case fRequestID:
				s.inv.RequestID = v
			case fTraceID:
				s.inv.TraceID = v
			case fInvocationID:
				s.inv.InvocationID = v
			case fClientContext:
				s.inv.ClientContext = v
			case fCognitoIdentity:
				s.inv.CognitoIdentity = v
			}
		}
	}
	if cap(s.strs) > maxRetainedStrs {
		s.strs = nil
	}
	if s.inv.RequestID == "" {
		return errNoRequestID
	}
	if err := checkRequestID(s.inv.RequestID); err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	return nil
}

// errInvalidID is wrapped with ErrInvalid or errMalformed by callers.
var errInvalidID = errors.New("request ID not safe in a URL path")

// requestID returns the request ID gathered by header so far, or "" when
// there is none or it is not safe in a URL path. It allocates: error paths
// only.
func (s *nextHeaders) requestID() string {
	id := s.gathered(fRequestID)
	if checkRequestID(id) != nil {
		return ""
	}
	return id
}

// gathered returns fresh field f as read by header so far, or "".
func (s *nextHeaders) gathered(f int) string {
	if s.inv == nil || s.seen&(1<<f) == 0 {
		return ""
	}
	return string(s.strs[s.spans[f].off:s.spans[f].end])
}
