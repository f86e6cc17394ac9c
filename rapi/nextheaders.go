package rapi

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// The headers of a /next answer, read into an Invocation by readHead's
// sink, and the check of a request ID.

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
// (April 2262). Past it, UnixNano and the arithmetic built on it wrap to
// 1677. So a later deadline is as unusable as a non-numeric one.
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

// checkRequestID reports whether id can be put into a URL path as is.
func checkRequestID(id string) error {
	if id == "" || id == "." || id == ".." || len(id) > maxRequestIDLen {
		return fmt.Errorf("%w: %q", errInvalidID, clipString(id))
	}
	for i := 0; i < len(id); i++ {
		if !pathSafe[id[i]] {
			return fmt.Errorf("%w: %q", errInvalidID, clipString(id))
		}
	}
	return nil
}

// pathSafe lists the bytes allowed in a request ID: RFC 3986 pchar without
// '%' (no percent-decoding surprises). So no CR, LF, space, '/', '?', '#'
// or control byte ever reaches the request line.
var pathSafe = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "-._~!$&'()*+,;=:@" {
		t[c] = true
	}
	return t
}()
