package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/pool"
	"github.com/lmigo/lmigo/rapi"
	"github.com/valyala/bytebufferpool"
	"go.uber.org/zap"
)

// The life of a slot: one goroutine of the pool, one connection, two
// buffers, one invocation at a time. Its steps are methods of the slot,
// in this file in the order they run, reaching what slots share through
// s.rt. runSlot loops. next fills the slot with an invocation: it reads
// the poll queued behind the last answer, or polls afresh. serve runs the
// handler and answers once (answer.go), with the next poll queued behind
// the answer on the same connection. It ends the invocation once (end).
// putBuffers keeps the buffers within the retain cap. Admission
// (admission.go) may hold a slot back before a fresh poll; drain
// (runtime.go) takes it once its goroutine has left the loop. A slot whose
// handler overran its deadline is replaced by a new one (overrun.go). It
// retires once its handler returns. The slot's side of the watch
// (startWatch, endWatch, retire) is in slotwatch.go. An invocation's
// counts are in inflight.go.

// slot is everything one invocation needs, reused from one invocation to
// the next. It belongs to its goroutine (runSlot), and to drain once that
// goroutine has left. Others only cut a stalled answer off its connection
// (watchStalls), read what its buffers keep (emitMetrics), and watch its
// deadline (watch, overrun.go).
type slot struct {
	rt   *Runtime
	conn *rapi.Conn
	inv  rapi.Invocation
	bufs *pool.Buffers
	req  *bytebufferpool.ByteBuffer
	resp *bytebufferpool.ByteBuffer
	// ended: the invocation in inv has been answered (answer.go).
	// finished: its work was waited for (finishWork, end.go).
	// labeled: the slot's goroutine carries its labels (labels.go).
	ended, finished, labeled bool
	// result is what its answer was, for its report line (end.go).
	result outcome
	// live is its context from hand-out until it ends, for the line
	// that names the invocations in flight (memory nearly exhausted).
	live atomic.Pointer[invocationContext]
	// answered is the request ID of the slot's last answer, whose reply
	// the next poll may read (lateReply).
	answered string
	// respHint is the size of the last RawHandler response that did not
	// fit the buffer lent to it: the next one lends that much (serve).
	respHint int
	// through: memory admission let this slot through a hold; it gives
	// the pass back when its round ends (tidy, admission.go).
	through bool
	// watch is the deadline of the invocation being served, for the
	// overrun watch, or what the watch made of it (slotwatch.go).
	watch atomic.Int64
	// goid is the ID of the slot's goroutine, whose stack the overrun
	// watch logs.
	goid atomic.Uint64
	// deadline is the invocation's deadline on the monotonic clock
	// (watchDeadline). replyAfter is the deadline plus the grace, set as
	// the answer is sent, 0 once the next poll returned. Past it the watch
	// cuts a reply still missing StallTimeout after its post
	// (cutMissingReplies). cut: the wait for the reply to the answer's
	// first post was cut, so its second post queues no poll (send).
	deadline   int64
	replyAfter atomic.Int64
	cut        bool
}

// newSlot makes a slot. Its next poll goes out behind its answer (see
// send) unless the overrun watch has replaced it (mayQueue).
func newSlot(rt *Runtime) *slot {
	s := &slot{rt: rt, bufs: pool.NewBuffers(rt.cfg.BufferRetainBytes)}
	s.conn = rt.client.Conn()
	return s
}

// runSlot is the life of slot s, on its goroutine of the pool. It polls
// (or reads the poll queued behind its last answer), serves what it
// polled and answers. It goes round again until polling stops. No
// invocation changes goroutine on its way. One slot is one poll or one
// invocation at a time: polls plus invocations in flight never exceed N.
// A function, not a method: the pool calls it with no wrapper's frame on
// the slot's stack (TestParkedSlotStack holds the bound).
func runSlot(s *slot) {
	rt := s.rt
	ctx := rt.polling
	s.goid.Store(goroutineID())
	for {
		// After an invocation, or after a goroutine that ended without
		// returning (runtime.Goexit in the handler: the pool starts the
		// slot again here).
		s.tidy()
		if s.replaced() {
			// Its handler overran, and a new slot took its place.
			s.retire()
			return
		}
		if !s.next(ctx) {
			break
		}
		s.serve()
	}
	s.tidy()
	rt.exited <- s
}

// tidy ends the slot's last round: its buffers go back (putBuffers), and
// its admission pass, if it had one.
func (s *slot) tidy() {
	s.passBack()
	s.putBuffers()
}

// passBack gives the pass back if s had it: its invocation has ended.
func (s *slot) passBack() {
	rt := s.rt
	if s.through {
		s.through = false
		rt.mem.through.Store(false)
	}
}

// putBuffers gives the slot's buffers back; one that grew past the retain
// cap is dropped there. The response buffer goes back first. Buffers hands
// out the last one put back first, and the request buffer is taken first
// (next, then serve). So each comes back to the same use. The other way
// round a large response buffer would hold the next request, and the
// response would grow a new one every time. For the same reason, the
// response buffer is dropped when the two do not fit in the retain cap
// together. Kept alone, it would be lent to the next request.
func (s *slot) putBuffers() {
	rt := s.rt
	if s.resp != nil {
		if s.req == nil || cap(s.req.B)+cap(s.resp.B) <= rt.cfg.BufferRetainBytes {
			s.bufs.Put(s.resp)
		}
		s.resp = nil
	}
	if s.req != nil {
		s.bufs.Put(s.req)
		s.req = nil
	}
	s.inv.Payload = nil
}

const (
	backoffMin = 5 * time.Millisecond
	backoffMax = 500 * time.Millisecond
)

// next fills s with an invocation. It returns false when polling must stop.
// A slot spends most of its life waiting here: what failures need is in
// pollFailed, so that this frame stays small (TestParkedSlotStack holds
// the bound).
func (s *slot) next(ctx context.Context) bool {
	rt := s.rt
	backoff := backoffMin
	if s.req == nil {
		s.req = s.bufs.Get() // the slot's own free list: held or listed alike
	}
	// Held back while memory is high, unless the poll is out already.
	if !s.conn.Queued() && !s.admit(ctx) {
		return false
	}
	for {
		if s.req == nil { // failUnserved gave it back
			s.req = s.bufs.Get()
		}
		s.inv.Payload = s.req.B[:0]
		err := s.conn.Next(ctx, &s.inv)
		s.replyAfter.Store(0) // the last answer's reply was read, or given up
		s.req.B = s.inv.Payload
		if err == nil {
			rt.outage.ok(rt.log)
			return true
		}
		if !s.pollFailed(ctx, err, &backoff) {
			return false
		}
	}
}

// pollFailed handles a failed poll. It returns false when polling must
// stop, else true once the slot may poll again. It backs off first when
// the Runtime API could not be reached.
//
//go:noinline
func (s *slot) pollFailed(ctx context.Context, err error, backoff *time.Duration) bool {
	rt := s.rt
	switch {
	case errors.Is(err, rapi.ErrRuntimeAPI):
		if errors.Is(err, rapi.ErrNoReply) {
			s.lateReply(err) // a cut is logged whatever the post sent again got
		}
		rt.stop(err)
		return false
	case errors.As(err, new(*rapi.AnswerError)):
		// The answer to the slot's last post (see send). The queued
		// poll is read next, or sent again if the connection broke.
		s.lateReply(err)
		return true
	case errors.Is(err, rapi.ErrNoReply):
		// The poll queued behind a post whose reply was cut went with its
		// connection. settle logged the cut; this is no outage.
		return true
	case refusedPoll(err):
		rt.stop(err)
		return false
	case s.inv.RequestID != "":
		// Handed out but not servable (too large, or the answer broke
		// off after its request ID, a shutdown's interruption
		// included): only this runtime can end it before its
		// deadline. No backoff: the /error has a poll queued behind it,
		// which must not wait while an invocation may be handed to it
		// (if the /error failed, so does that poll).
		if errors.Is(err, rapi.ErrPayloadTooLarge) {
			s.failUnserved(errTypeRequestTooLarge,
				fmt.Errorf("request payload larger than %d bytes (LMIGO_MAX_REQUEST_BYTES)", rt.cfg.MaxRequestBytes))
		} else {
			s.failUnreadable(err)
		}
		return true
	case !s.inv.Deadline.IsZero():
		return s.holdUnanswerable(ctx, err)
	case ctx.Err() != nil:
		return false
	}
	rt.outage.failed(rt.log, err, *backoff)
	// Full jitter keeps N slots from retrying in lockstep.
	wait := *backoff/2 + rand.N(*backoff/2+1)
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return false
	}
	*backoff = min(*backoff*2, backoffMax)
	return true
}

// refusedPoll reports whether err is a 4xx answer to /next. A poll sends
// nothing a retry could change: the environment's state (403) or the
// address (404) forbids it for good, so the runtime ends (doc.go, Failures).
func refusedPoll(err error) bool {
	var se *rapi.StatusError
	return errors.As(err, &se) && se.Op == "next" && se.Code/100 == 4
}

// failUnserved answers, with an error, an invocation that next read but
// that cannot be served, ends it as a served one ends, and gives the
// slot's buffers back.
func (s *slot) failUnserved(errorType string, err error) {
	s.deadline = watchDeadline(s.inv.Deadline, time.Now())
	s.begin()
	s.fail(errorType, err)
	s.end()
	s.putBuffers()
}

// failUnreadable answers, with an error, an invocation whose /next answer
// broke off after its request ID. The Runtime API handed it out, so its
// caller would otherwise wait for its deadline.
func (s *slot) failUnreadable(err error) {
	errorType := errTypeInvalidInvocation
	if errors.Is(err, rapi.ErrTransport) || errors.Is(err, context.Canceled) {
		errorType = errTypeTruncatedInvocation
	}
	s.failUnserved(errorType, fmt.Errorf("the invocation could not be read: %w", err))
}

// msgUnanswerable is logged once for an invocation that cannot be answered.
const msgUnanswerable = "an invocation was handed out with no request ID it can be answered by: " +
	"its slot is held until its deadline, as the platform holds the invocation"

// holdUnanswerable holds s while the platform holds an invocation handed
// to it with no request ID a URL can carry (rapi.Conn.Next). No answer
// can end it, so it ends by its deadline. A poll before then would be one
// beyond N. The bound is what remained of the deadline at hand-out, or
// maxInvocation for one already past (watchDeadline). LMIGO_OVERRUN_GRACE
// is added, as for a handler that overruns: the header counts
// milliseconds, and the platform's clock is not ours. It reports whether
// the slot may poll again (false once polling stops).
//
//go:noinline
func (s *slot) holdUnanswerable(ctx context.Context, err error) bool {
	rt := s.rt
	now := time.Now()
	hold := time.Duration(watchDeadline(s.inv.Deadline, now)-mono(now)) + rt.cfg.OverrunGrace
	rt.log.Error(msgUnanswerable, zap.Time("deadline", s.inv.Deadline), zap.Duration("heldFor", hold), zap.Error(err))
	s.inv.Deadline = time.Time{}
	t := time.NewTimer(hold)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// outageLogEvery is the most often the runtime repeats its warning while
// polls keep failing: N slots retrying with backoff would otherwise write
// N lines per backoff step.
const outageLogEvery = time.Second

// outage rate-limits what the slots log while /next fails. The first
// failure is logged at once. Then the whole runtime writes at most one
// line per outageLogEvery, counting the failures in between. The first
// poll that succeeds afterwards logs once that the Runtime API is back.
// It is shared by all slots.
type outage struct {
	down atomic.Bool // fast path for ok: one load per successful poll

	mu       sync.Mutex
	since    time.Time // first failure of this outage
	logged   time.Time // last line written
	failures int64     // failures since the outage began
	quiet    int64     // failures since the last line
}

// failed records a failed poll and logs it unless a line went out less than
// outageLogEvery ago.
func (o *outage) failed(log *zap.Logger, err error, backoff time.Duration) {
	now := time.Now()
	o.mu.Lock()
	if !o.down.Load() {
		o.down.Store(true)
		o.since, o.failures, o.quiet, o.logged = now, 0, 0, time.Time{}
	}
	o.failures++
	o.quiet++
	if now.Sub(o.logged) < outageLogEvery {
		o.mu.Unlock()
		return
	}
	failures, quiet, since := o.failures, o.quiet, o.since
	o.logged, o.quiet = now, 0
	o.mu.Unlock()
	log.Warn("polling for the next invocation failed, retrying",
		zap.Error(err), zap.Duration("backoff", backoff),
		zap.Int64("failures", failures), zap.Int64("failuresSinceLastLine", quiet),
		zap.Duration("downFor", now.Sub(since)))
}

// ok records a successful poll; after failures it logs the recovery once.
func (o *outage) ok(log *zap.Logger) {
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	if !o.down.Load() {
		o.mu.Unlock()
		return
	}
	o.down.Store(false)
	failures, since := o.failures, o.since
	o.mu.Unlock()
	log.Info("polling for the next invocation works again",
		zap.Int64("failures", failures), zap.Duration("downFor", time.Since(since)))
}

// serve runs the invocation in s and answers it exactly once (answer.go).
// Its context ends once on every way out: finish runs where the answer is
// known, or from the guard when serve is left otherwise. end (end.go) ends
// the invocation after its answer, whichever way serve is left.
func (s *slot) serve() {
	rt := s.rt
	inv := &s.inv
	s.resp = s.bufs.Get()
	s.ended, s.finished = false, false
	s.begin()
	s.startWatch()
	defer s.end()
	// live is the invocation's context until finish ends it.
	var live *invocationContext
	// Panics are recovered by the handler adapter; runtime.Goexit cannot
	// be, and ends the slot's goroutine (the pool starts another). After
	// it, or a context that cannot be decoded, the invocation ends here.
	defer func() {
		if live != nil {
			s.finish(live, nil) //nolint:errcheck // answered as exited or failed
		}
		if !s.ended {
			s.fail(errTypeHandlerExited, errors.New("the handler called runtime.Goexit"))
		}
	}()

	if inv.DeadlineErr != nil {
		s.fail(errTypeInvalidDeadline, inv.DeadlineErr)
		return
	}
	ctx := newInvocation(rt.parentCtx(inv), inv.Deadline, &lambdacontext.LambdaContext{
		AwsRequestID:       inv.RequestID,
		InvokedFunctionArn: inv.FunctionARN,
		TenantID:           inv.TenantID,
	}, inv.TraceID, rt.handlerLog)
	live = ctx
	s.live.Store(ctx)
	// Decoded into the context's own LambdaContext: one allocation for both.
	lc := &ctx.lc
	if inv.ClientContext != "" {
		if err := lc.ClientContext.UnmarshalJSON([]byte(inv.ClientContext)); err != nil {
			s.fail(errTypeInvalidClientContext,
				fmt.Errorf("Lambda-Runtime-Client-Context is not valid JSON: %w", err))
			return
		}
	}
	if inv.CognitoIdentity != "" {
		if err := json.Unmarshal([]byte(inv.CognitoIdentity), &lc.Identity); err != nil {
			s.fail(errTypeInvalidCognitoIdentity,
				fmt.Errorf("Lambda-Runtime-Cognito-Identity is not valid JSON: %w", err))
			return
		}
	}
	if rt.setTraceEnv {
		_ = os.Setenv("_X_AMZN_TRACE_ID", inv.TraceID)
	}
	if s.respHint > cap(s.resp.B) {
		// Lent, so that it may be kept: see handler.callRaw.
		s.resp.B = make([]byte, 0, s.respHint)
	}
	s.respHint = 0

	s.label(ctx) // handed to the handler
	contentType, body, direct, err := rt.h.runLent(ctx, inv.Payload, s.resp, &ctx.out)
	if body != nil {
		s.stream(ctx, contentType, body) // while ctx lives: body may need it
		live = nil
		if err := s.finish(ctx, nil); err != nil {
			workFailedAfterStream(ctx, err) // fanout.go
		}
		return
	}
	live = nil
	err = s.finish(ctx, err) // the work's failure

	// direct is the handler's own result: a json.RawMessage, or a
	// RawHandler's response in an array it did not get from the runtime.
	// It is borrowed until the Runtime API has accepted it. Its reply may
	// be read by the slot's next poll, which sends it again if need be.
	// Otherwise the response is in s.resp, which is not written again
	// before that.
	resp := s.resp.B
	if direct != nil {
		resp = direct
		if rt.h.path == pathRaw && len(direct) > cap(s.resp.B) && len(direct) <= rt.cfg.BufferRetainBytes {
			s.respHint = len(direct)
		}
	}
	switch {
	case err != nil:
		s.failWith(err)
	case len(resp) > rt.cfg.MaxResponseBytes:
		s.fail(errTypeResponseTooLarge, fmt.Errorf("%w: %d bytes, the limit is %d (LMIGO_MAX_RESPONSE_BYTES)",
			ErrResponseTooLarge, len(resp), rt.cfg.MaxResponseBytes))
	default:
		s.respond(resp, contentType)
	}
}

// replaced reports whether the watch replaced s: its goroutine retires.
func (s *slot) replaced() bool { return s.watch.Load() == watchReplaced }
