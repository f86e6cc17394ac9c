package rapitest

import (
	"context"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Error types of invocations that the platform, not the function, ends.
const (
	ErrorTypeTimeout   = "Sandbox.Timedout"
	ErrorTypeTooLarge  = "Function.ResponseSizeTooLarge"
	ErrorTypeTruncated = "Runtime.TruncatedResponse"
)

// Request is one invocation to hand to the runtime.
type Request struct {
	// Payload is the /next body. The server reads it until Invoke returns.
	Payload []byte
	// Timeout sets the deadline from hand-out; 0 means Options.Timeout.
	Timeout time.Duration
	// TraceID is sent as Lambda-Runtime-Trace-Id; "" means a generated one.
	TraceID string
	// TenantID, ClientContext and CognitoIdentity are sent when not "".
	TenantID, ClientContext, CognitoIdentity string
	// Headers are set on the /next reply after all others, so they may
	// override them: a value of "" removes the header. Keys are
	// canonicalised. A non-empty Lambda-Runtime-Aws-Request-Id becomes the
	// invocation's request ID (it must be unique among invocations in
	// flight). Values pass through net/http, which writes CR and LF as spaces.
	Headers map[string]string
	// Fault, when set, replaces the /next reply that hands this invocation
	// out; PostFault the reply to the runtime's post that ends it. See Fault.
	Fault, PostFault *Fault
}

// Result is how an invocation ended.
type Result struct {
	RequestID string
	// Body is the /response body (a new slice); nil when Err is set. A
	// streamed response that ended in error trailers is the exception. Then
	// it holds what was streamed before the error (the emulator drops it).
	Body []byte
	// ContentType is the Content-Type of the /response.
	ContentType string
	// ResponseMode is the /response's Lambda-Runtime-Function-Response-Mode:
	// ResponseModeStreaming, or "" for a buffered response.
	ResponseMode string
	// Err is set when the runtime posted /error or a /response ending in
	// error trailers, or when the platform ended the invocation
	// (ErrorTypeTimeout, ErrorTypeTooLarge, ErrorTypeTruncated,
	// ErrorTypeInvalidResponseMode).
	Err *FunctionError
	// Status is http.StatusOK for every ended invocation: the emulator's
	// invoke endpoint, like Lambda's Invoke API, reports function errors
	// and timeouts with 200 and an error type (here Err).
	Status int
	// Latency runs from hand-out (the /next reply) until the runtime's
	// post was read in full, or until the deadline for a timeout.
	Latency time.Duration
	// Delivered: the /next reply that handed the invocation out carried its
	// request ID whole, so the runtime could answer it. It is false when a
	// fault cut or replaced that part of the reply, or Request.Headers
	// removed the ID or made it unusable. It is exact for Request.Fault; for
	// a fault by call index, once the reply is written.
	Delivered bool
}

// FunctionError is an error that ended an invocation.
type FunctionError struct {
	Type  string // Lambda-Runtime-Function-Error-Type, or one of the ErrorType constants
	Body  []byte // the /error body (JSON), a new slice; or the decoded error body trailer
	Cause []byte // Lambda-Runtime-Function-XRay-Error-Cause, if sent
	// Trailer: the error came in the trailers of a streamed /response.
	Trailer bool
}

// Error gives the error type and the body.
func (e *FunctionError) Error() string { return "function error " + e.Type + ": " + string(e.Body) }

// States of an invocation; it leaves stateAssigned exactly once.
const (
	stateAssigned int32 = iota
	stateAnswered
	stateTimedOut
	stateCanceled
	stateAborted
)

// invocation is one handed-out invocation, in Server.inflight from hand-out
// until the runtime's first post for it.
type invocation struct {
	id, invocationID, traceID string
	req                       *Request
	start, deadline           time.Time
	state                     atomic.Int32
	done                      chan Result // cap 1: the post handler never blocks
	// held: the runtime's slot is counted in Outstanding for it, from
	// hand-out until its first post. It is not counted when its /next reply,
	// as a fault left it, did not carry its request ID.
	held atomic.Bool
	// unanswerable: Request.Headers removed its request ID or made it
	// unusable in a URL path. Set before hand-out.
	unanswerable bool
	// undelivered: a fault kept its request ID from the runtime.
	undelivered atomic.Bool
	written     sync.WaitGroup // the /next reply no longer reads req.Payload

	// The /next reply being written, and whether Invoke has cut it: a
	// runtime that does not read its reply must not hold Invoke.
	wmu sync.Mutex
	w   http.ResponseWriter
	cut bool
}

// poll is one pending /next.
type poll struct {
	state atomic.Int32 // pollWaiting, then claimed by Invoke or canceled by Close
	ch    chan *invocation
}

const (
	pollWaiting int32 = iota
	pollClaimed
	pollCanceled
)

var pollPool = sync.Pool{New: func() any { return &poll{ch: make(chan *invocation, 1)} }}

// Invoke hands req to one pending /next and waits until the invocation
// ends, ctx is done or the server closes. Without a pending /next it fails
// at once with ErrThrottled, or, with Options.Queue, waits for one.
//
// A timeout, an oversized or a truncated response is a Result whose Err
// says so, with a nil error. When ctx is done after hand-out the Result
// holds the request ID and the error is ctx.Err(); the runtime's post for it
// then gets 400, as when a caller disconnects. However it ends, a /next
// reply still being written then is cut: a runtime that does not read
// never holds Invoke.
func (s *Server) Invoke(ctx context.Context, req Request) (Result, error) {
	if s.isClosed() {
		return Result{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err // not worth a poll
	}
	p, err := s.claimPoll(ctx)
	if err != nil {
		return Result{}, err
	}
	inv := s.assign(p, &req)

	timer := getTimer(inv.deadline.Sub(inv.start))
	defer putTimer(timer)
	var (
		res  Result
		rerr error
	)
	select {
	case res = <-inv.done:
	case <-timer.C:
		s.timeOut(inv)
		res = <-inv.done // the timeout, or the post that came first
	case <-ctx.Done():
		if inv.state.CompareAndSwap(stateAssigned, stateCanceled) {
			s.c.canceled.Add(1)
			res, rerr = Result{RequestID: inv.id}, ctx.Err()
		} else {
			res = <-inv.done
		}
	case <-s.closed:
		if inv.state.CompareAndSwap(stateAssigned, stateAborted) {
			s.c.aborted.Add(1)
			res, rerr = Result{RequestID: inv.id}, ErrClosed
		} else {
			res = <-inv.done
		}
	}
	inv.cutWrite() // the caller owns Payload again only after this
	res.Delivered = !inv.unanswerable && !inv.undelivered.Load()
	return res, rerr
}

// aLongTimeAgo, as a write deadline, fails a blocked write at once.
var aLongTimeAgo = time.Unix(1, 0)

// beginWrite registers w as the writer of inv's /next reply; a cut that
// came first applies at once.
func (inv *invocation) beginWrite(w http.ResponseWriter) {
	inv.wmu.Lock()
	inv.w = w
	if inv.cut {
		_ = http.NewResponseController(w).SetWriteDeadline(aLongTimeAgo)
	}
	inv.wmu.Unlock()
}

// endWrite marks the reply written; err is its Write's. A cut that came
// once every byte was written leaves the connection usable.
func (inv *invocation) endWrite(err error) {
	inv.wmu.Lock()
	if inv.cut && err == nil {
		_ = http.NewResponseController(inv.w).SetWriteDeadline(time.Time{})
	}
	inv.w = nil
	inv.wmu.Unlock()
	inv.written.Done()
}

// cutWrite fails a /next reply still being written, then waits until the
// reply no longer reads Payload. The runtime loses that reply, as when its
// connection breaks; its invocation has ended already.
func (inv *invocation) cutWrite() {
	inv.wmu.Lock()
	inv.cut = true
	if inv.w != nil {
		_ = http.NewResponseController(inv.w).SetWriteDeadline(aLongTimeAgo)
	}
	inv.wmu.Unlock()
	inv.written.Wait()
}

// Invoke's deadline timers are reused: a new timer per invocation cost
// an allocation and more under load.
var timers sync.Pool

func getTimer(d time.Duration) *time.Timer {
	if t, ok := timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// putTimer stops t and keeps it for reuse; since Go 1.23 a stopped timer's
// channel holds no stale value, so Reset starts clean.
func putTimer(t *time.Timer) {
	t.Stop()
	timers.Put(t)
}

func (s *Server) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// claimPoll takes a pending /next for Invoke.
func (s *Server) claimPoll(ctx context.Context) (*poll, error) {
	for {
		var p *poll
		if s.opts.Queue {
			select {
			case p = <-s.pollq:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-s.closed:
				return nil, ErrClosed
			}
		} else {
			select {
			case p = <-s.pollq:
			default:
				s.c.throttles.Add(1)
				return nil, ErrThrottled
			}
		}
		// A poll canceled by Close stays queued; skip it.
		if p.state.CompareAndSwap(pollWaiting, pollClaimed) {
			s.c.pending.Add(-1)
			return p, nil
		}
		if s.isClosed() {
			return nil, ErrClosed
		}
	}
}

// assign makes the invocation, registers it and hands it to p.
func (s *Server) assign(p *poll, req *Request) *invocation {
	seq := s.seq.Add(1)
	now := s.opts.now()
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = s.opts.Timeout
	}
	inv := &invocation{
		req:      req,
		start:    now,
		deadline: now.Add(timeout),
		done:     make(chan Result, 1),
	}
	inv.id = formatID(s.ids.request, seq)
	inv.invocationID = formatID(s.ids.invocation, seq)
	inv.traceID = req.TraceID
	if inv.traceID == "" {
		inv.traceID = s.ids.traceID(now, seq)
	}
	for k, v := range req.Headers {
		if textproto.CanonicalMIMEHeaderKey(k) == hdrRequestID {
			if v != "" {
				inv.id = v
			}
			inv.unanswerable = v == "" || strings.ContainsAny(v, "/?#% \t\r\n")
		}
		if textproto.CanonicalMIMEHeaderKey(k) == hdrInvocationID {
			inv.invocationID = v // the echo checked is the one sent; "" removes it
		}
	}
	inv.held.Store(true)
	s.c.invocations.Add(1)
	s.inflight.Store(inv.id, inv)
	inv.written.Add(1)
	p.ch <- inv // cap 1 and p is ours: never blocks
	return inv
}

// timeOut ends inv by its deadline unless it has ended already, and reports
// whether it did. As on the platform, the invocation is over then: it no
// longer counts toward N. The runtime may still hold it (a handler that
// ignores its deadline), and its late post gets 410.
func (s *Server) timeOut(inv *invocation) bool {
	if !inv.state.CompareAndSwap(stateAssigned, stateTimedOut) {
		return false
	}
	s.c.timeouts.Add(1)
	s.release(inv)
	inv.done <- timeoutResult(inv) // cap 1, and only the CAS winner sends
	return true
}

// expire ends, by their deadline, the invocations the fake's clock says
// are past it, and reports whether it ended any. It walks every
// invocation in flight: it is for a poll that would be a violation
// otherwise, never on the way of a well-behaved runtime.
func (s *Server) expire() bool {
	now := s.opts.now()
	ended := false
	s.inflight.Range(func(_, v any) bool {
		if inv := v.(*invocation); !now.Before(inv.deadline) && s.timeOut(inv) {
			ended = true
		}
		return true
	})
	return ended
}

// release frees the runtime's slot counted for inv, once.
func (s *Server) release(inv *invocation) {
	if inv.held.CompareAndSwap(true, false) {
		s.c.outstanding.Add(-1)
	}
}

func timeoutResult(inv *invocation) Result {
	d := inv.deadline.Sub(inv.start)
	body := fmt.Appendf(nil, `{"errorMessage":"Task timed out after %.2f seconds","errorType":%q}`, d.Seconds(), ErrorTypeTimeout)
	return Result{
		RequestID: inv.id,
		Err:       &FunctionError{Type: ErrorTypeTimeout, Body: body},
		Status:    http.StatusOK,
		Latency:   d,
	}
}
