package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/pool"
	"github.com/lmigo/lmigo/rapi"
	"github.com/valyala/bytebufferpool"
	"go.uber.org/zap"
)

// Runtime serves invocations of one handler from the Runtime API.
type Runtime struct {
	cfg     limits.Config
	opts    options
	h       *handler
	log     *zap.Logger
	client  *rapi.Client
	slots   []*slot
	// workers runs each slot as one long-lived task (runSlot): its size is
	// the number of slot goroutines the runtime may have.
	workers *pool.Workers[*slot]
	// polling is the context the slots poll with, until Run stops polling.
	polling context.Context
	// exited receives each slot once its goroutine has left its loop.
	exited  chan *slot
	baseCtx context.Context
	// setTraceEnv: _X_AMZN_TRACE_ID is process-wide, so it is only
	// meaningful (and only set) when one invocation runs at a time.
	setTraceEnv bool

	running atomic.Bool
	// stopping turns off queued polls: a poll queued during shutdown would
	// be abandoned at exit, and the invocation handed to it lost.
	stopping atomic.Bool
	// shutdown is the context answers are posted with once stopping is
	// set (answerCtx): its deadline is the shutdown budget's. Run sets it
	// before stopping, which orders the write before every read.
	shutdown context.Context
	fatal    chan error
	metrics  *runtimeMetrics // nil unless LMIGO_METRICS=emf
	idle     idleTracker     // for the idle free (startIdleFree)
	outage   outage          // rate-limits the warnings while /next fails
	mem      memGuard        // memory-aware admission (admission.go)
	// setMemoryLimit is debug.SetMemoryLimit (memlimit.go); tests replace
	// it, so that they see the limit the runtime would set without
	// changing their own.
	setMemoryLimit func(int64) int64
}

// slot is everything one invocation needs, reused from one invocation to
// the next. It belongs to its goroutine (runSlot), and to drain once that
// goroutine has left; others only cut a stalled answer off its connection
// (watchStalls) and read what its buffers keep (emitMetrics).
type slot struct {
	conn *rapi.Conn
	inv  rapi.Invocation
	bufs *pool.Buffers
	req  *bytebufferpool.ByteBuffer
	resp *bytebufferpool.ByteBuffer
	// ended: the invocation in inv has been answered (answer.go).
	ended bool
	// answered is the request ID of the slot's last answer, whose reply
	// the next poll may read (lateReply).
	answered string
	// respHint is the size of the last RawHandler response that did not
	// fit the buffer lent to it: the next one lends that much (serve).
	respHint int
	// through: memory admission let this slot through a hold; it gives
	// the pass back when it is free again (admission.go).
	through bool
}

// New builds a Runtime for handler from the environment. It returns an
// error wrapping ErrConfig when a variable is invalid (every bad variable
// is named) and ErrInvalidHandler when handler has an unsupported form.
func New(handler any, opts ...Option) (*Runtime, error) {
	o := newOptions(opts)
	cfg, err := limits.FromEnv(o.lookup)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if o.handler.codec, err = resolveCodec(o.codecs, cfg.JSONCodec, o.codec, o.handler); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	h, err := newHandler(handler, o.handler)
	if err != nil {
		if !errors.Is(err, ErrInvalidHandler) {
			err = fmt.Errorf("%w: %w", ErrInvalidHandler, err)
		}
		return nil, err
	}
	client, err := rapi.New(cfg.RuntimeAPI, append([]rapi.Option{rapi.WithMaxRequestBytes(cfg.MaxRequestBytes)}, o.rapi...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: AWS_LAMBDA_RUNTIME_API=%q: %w", ErrConfig, cfg.RuntimeAPI, err)
	}
	rt := &Runtime{
		cfg:         cfg,
		opts:        o,
		h:           h,
		log:         o.logger,
		client:      client,
		exited:      make(chan *slot, cfg.Workers),
		baseCtx:     o.baseCtx,
		setTraceEnv: cfg.MaxConcurrency == 1,
		fatal:       make(chan error, 1),
		metrics:     newMetrics(cfg, o.stdout),

		setMemoryLimit: debug.SetMemoryLimit,
	}
	rt.mem.init()
	rt.idle.init()
	if rt.log == nil {
		rt.log = newLogger(cfg.LogFormat, cfg.LogLevel, o.stderr)
	}
	for _, v := range o.values {
		rt.baseCtx = context.WithValue(rt.baseCtx, v.key, v.val)
	}
	rt.slots = make([]*slot, cfg.Workers)
	for i := range rt.slots {
		s := &slot{conn: client.Conn(), bufs: pool.NewBuffers(cfg.BufferRetainBytes)}
		s.conn.QueueNext(true) // see send
		s.conn.QueueNextIf(rt.mayQueue)
		s.conn.LazyAnswer(true)
		rt.slots[i] = s
	}
	for _, f := range o.tune {
		f(rt)
	}
	return rt, nil
}

// Config returns the configuration the runtime was built with.
func (rt *Runtime) Config() limits.Config { return rt.cfg }

// Run serves invocations until ctx is cancelled or the Runtime API reports
// a broken environment. On cancellation it stops polling, waits up to
// limits.Config.ShutdownTimeout for invocations in flight and returns nil.
// Run may be called once.
func (rt *Runtime) Run(ctx context.Context) error {
	if !rt.running.CompareAndSwap(false, true) {
		return errors.New("concurrent: Run called twice")
	}
	rt.log.Debug("runtime_worker_pool_initializing",
		zap.Int("workerCount", rt.cfg.Workers),
		zap.Int("executionEnvironmentMaxConcurrency", rt.cfg.MaxConcurrency))
	rt.applyMemoryLimit()
	stopMetrics := rt.startMetrics()
	defer rt.startIdleFree()()
	// Before the first /next: registration closes when init ends.
	stopExtension := rt.enableSIGTERM()
	defer stopExtension()
	defer rt.watchStalls()()

	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	rt.polling = pollCtx
	rt.connect(pollCtx)
	rt.startSlots()

	var err error
	select {
	case <-ctx.Done():
	case err = <-rt.fatal:
		// The one line that says why the process ends.
		err = fmt.Errorf("%w: %w", ErrRuntimeAPI, err)
		rt.log.Error("runtime API failure, stopping", zap.Error(err))
	}
	// One budget for the whole shutdown, answers posted during it included:
	// Lambda kills the process about 600 ms after SIGTERM.
	began := time.Now()
	deadline := began.Add(rt.cfg.ShutdownTimeout)
	var endShutdown context.CancelFunc
	rt.shutdown, endShutdown = context.WithDeadline(context.Background(), deadline)
	defer endShutdown()
	rt.stopping.Store(true)
	stopPolling()
	drainBy := deadline
	if len(rt.opts.hooks) > 0 {
		drainBy = deadline.Add(-rt.cfg.ShutdownTimeout / hookShare)
	}
	left := rt.drain(drainBy)
	if rt.workers != nil {
		_ = rt.workers.Release(max(time.Until(drainBy), time.Millisecond))
	}
	stopMetrics() // the last document, after the last invocation
	for _, s := range rt.slots {
		_ = s.conn.Close()
	}
	rt.runHooks(deadline)
	if err == nil {
		rt.log.Info("runtime stopped", zap.NamedError("cause", context.Cause(ctx)),
			zap.Int("inFlightLeft", left), zap.Duration("shutdown", time.Since(began)))
	}
	_ = rt.log.Sync()
	return err
}

// connect opens the slots' connections from a few goroutines before the
// slots start, so that no slot goroutine grows its stack for a dial. It
// stops at the first error, which the slots then meet and report as they
// would.
func (rt *Runtime) connect(ctx context.Context) {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(len(rt.slots), connectors) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(rt.slots)) && !failed.Load(); i = next.Add(1) - 1 {
				if rt.slots[i].conn.Connect(ctx) != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
}

// connectors is how many goroutines connect opens connections from.
const connectors = 4

// startSlots starts each slot's goroutine in the pool. Its size is the
// number of slot goroutines the runtime may have: the slots, and as many
// spares (spareSlots).
func (rt *Runtime) startSlots() {
	workers, err := pool.NewWorkers(len(rt.slots)+spareSlots, rt.runSlot, pool.WithPanicHandler(rt.slotPanicked))
	if err == nil {
		rt.workers = workers
	}
	for _, s := range rt.slots {
		if err == nil {
			err = workers.Invoke(s)
		}
		if err != nil {
			// Unreachable with the arguments above; a slot of its own
			// keeps the capacity rather than losing it.
			rt.log.Error("the slot pool refused a slot", zap.Error(err))
			go rt.runSlot(s)
		}
	}
}

// spareSlots is how many slot goroutines the pool may run beyond the
// slots: room for slots that replace one whose handler overran its
// deadline.
const spareSlots = 0

// slotPanicked logs a panic that escaped a slot's loop: the handler
// adapter recovers the handler's own, so this is the runtime's. The pool
// starts the slot again (runSlot).
func (rt *Runtime) slotPanicked(v any) {
	rt.log.Error("a slot's goroutine panicked; the slot starts again", zap.Error(newPanicError(v)))
}

// drain waits for the slots' goroutines to leave their loops (the
// invocations in flight to end), and returns how many are still out at the
// deadline. It reads the reply to each slot's last answer if the slot's
// poll did not (rapi.Conn.ReadAnswer): an answer the Runtime API accepted
// is then not left unconfirmed.
func (rt *Runtime) drain(deadline time.Time) int {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for i := range rt.slots {
		select {
		case s := <-rt.exited:
			rt.lateReply(s.answered, s.conn.ReadAnswer(ctx))
		case <-ctx.Done():
			rt.log.Warn("shutdown timeout with invocations still in flight",
				zap.Duration("timeout", rt.cfg.ShutdownTimeout), zap.Int("inFlight", len(rt.slots)-i))
			return len(rt.slots) - i
		}
	}
	return 0
}

func (rt *Runtime) stop(err error) {
	select {
	case rt.fatal <- err:
	default:
	}
}

// runSlot is the life of slot s, on its goroutine of the pool: it polls
// (or reads the poll queued behind its last answer), serves what it
// polled, answers, and goes round again, until polling stops. No
// invocation changes goroutine on its way. One slot is one poll or one
// invocation at a time: polls plus invocations in flight never exceed N.
func (rt *Runtime) runSlot(s *slot) {
	// A goroutine that ended without returning (runtime.Goexit in the
	// handler, a panic) may have left them: the pool starts the slot
	// again here.
	rt.putBuffers(s)
	rt.passBack(s)
	ctx := rt.polling
	for {
		// Held back while memory is high, unless the poll is out already.
		if !s.conn.Queued() && !rt.admit(ctx, s) {
			break
		}
		if !rt.next(ctx, s) {
			break
		}
		rt.serve(s)
		rt.putBuffers(s)
		rt.passBack(s)
	}
	rt.putBuffers(s)
	rt.passBack(s)
	rt.exited <- s
}

const (
	backoffMin = 5 * time.Millisecond
	backoffMax = 500 * time.Millisecond
)

// next fills s with an invocation. It returns false when polling must stop.
func (rt *Runtime) next(ctx context.Context, s *slot) bool {
	backoff := backoffMin
	for {
		if s.req == nil {
			s.req = s.bufs.Get()
		}
		s.inv.Payload = s.req.B[:0]
		err := s.conn.Next(ctx, &s.inv)
		s.req.B = s.inv.Payload
		switch {
		case err == nil:
			rt.outage.ok(rt.log)
			return true
		case errors.Is(err, rapi.ErrRuntimeAPI):
			rt.stop(err)
			return false
		case errors.As(err, new(*rapi.AnswerError)):
			// The answer to the slot's last post (see send). The queued
			// poll is read next, or sent again if the connection broke.
			rt.lateReply(s.answered, err)
			continue
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
				rt.failUnserved(s, errTypeRequestTooLarge,
					fmt.Errorf("request payload larger than %d bytes (LMIGO_MAX_REQUEST_BYTES)", rt.cfg.MaxRequestBytes))
			} else {
				rt.failUnreadable(s, err)
			}
			continue
		case ctx.Err() != nil:
			return false
		}
		rt.outage.failed(rt.log, err, backoff)
		// Full jitter keeps N slots from retrying in lockstep.
		wait := backoff/2 + rand.N(backoff/2+1)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		backoff = min(backoff*2, backoffMax)
	}
}

// refusedPoll reports whether err is a 4xx answer to /next. A poll sends
// nothing a retry could change: the environment's state (403) or the
// address (404) forbids it for good, so the runtime ends (doc.go, Failures).
func refusedPoll(err error) bool {
	var se *rapi.StatusError
	return errors.As(err, &se) && se.Op == "next" && se.Code/100 == 4
}

// serve runs the invocation in s and answers it exactly once (answer.go).
func (rt *Runtime) serve(s *slot) {
	inv := &s.inv
	s.resp = s.bufs.Get()
	s.ended = false
	rt.metrics.begin()
	defer rt.metrics.end()
	rt.idle.begin()
	defer func() { rt.idle.end(idleClock()) }()
	// Panics are recovered by the handler adapter; runtime.Goexit cannot
	// be, and ends the slot's goroutine (the pool starts another): it is
	// answered here on its way out.
	defer func() {
		if !s.ended {
			rt.fail(s, errTypeHandlerExited, errors.New("the handler called runtime.Goexit"))
		}
	}()

	if inv.DeadlineErr != nil {
		rt.fail(s, errTypeInvalidDeadline, inv.DeadlineErr)
		return
	}
	ctx := newInvocation(rt.baseCtx, inv.Deadline, &lambdacontext.LambdaContext{
		AwsRequestID:       inv.RequestID,
		InvokedFunctionArn: inv.FunctionARN,
		TenantID:           inv.TenantID,
	}, inv.TraceID, rt.log)
	// Ends ctx after a stream, a failure or a Goexit; a no-op after the
	// buffered answer's own cancel below.
	defer ctx.cancel()
	// Decoded into the context's own LambdaContext: one allocation for both.
	lc := &ctx.lc
	if inv.ClientContext != "" {
		if err := lc.ClientContext.UnmarshalJSON([]byte(inv.ClientContext)); err != nil {
			rt.fail(s, errTypeInvalidClientContext,
				fmt.Errorf("Lambda-Runtime-Client-Context is not valid JSON: %w", err))
			return
		}
	}
	if inv.CognitoIdentity != "" {
		if err := json.Unmarshal([]byte(inv.CognitoIdentity), &lc.Identity); err != nil {
			rt.fail(s, errTypeInvalidCognitoIdentity,
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

	contentType, body, direct, err := rt.h.runLent(ctx, inv.Payload, s.resp, &ctx.out)
	if body != nil {
		rt.stream(s, contentType, body) // while ctx lives: body may need it
		return
	}
	ctx.cancel()

	// direct is the handler's own result (a json.RawMessage, or a
	// RawHandler's response in an array it did not get from the runtime),
	// borrowed until the Runtime API has accepted it (its reply may be read
	// by the slot's next poll, which sends it again if need be); otherwise
	// the response is in s.resp, which is not written again before that.
	resp := s.resp.B
	if direct != nil {
		resp = direct
		if rt.h.path == pathRaw && len(direct) > cap(s.resp.B) && len(direct) <= rt.cfg.BufferRetainBytes {
			s.respHint = len(direct)
		}
	}
	switch {
	case err != nil:
		rt.failWith(s, err)
	case len(resp) > rt.cfg.MaxResponseBytes:
		rt.fail(s, errTypeResponseTooLarge, fmt.Errorf("%w: %d bytes, the limit is %d (LMIGO_MAX_RESPONSE_BYTES)",
			ErrResponseTooLarge, len(resp), rt.cfg.MaxResponseBytes))
	default:
		rt.respond(s, resp, contentType)
	}
}

// failUnserved answers, with an error, an invocation that next read but
// that cannot be served, counts it as one in the metrics, and gives the
// slot's buffers back.
func (rt *Runtime) failUnserved(s *slot, errorType string, err error) {
	rt.metrics.begin()
	rt.fail(s, errorType, err)
	rt.metrics.end()
	rt.putBuffers(s)
}

// putBuffers gives the slot's buffers back; one that grew past the retain
// cap is dropped there. The response buffer goes back first: Buffers hands
// out the last one put back first, and the request buffer is taken first
// (next, then serve), so each comes back to the same use. The other way
// round a large response buffer would hold the next request, and the
// response would grow a new one every time. For the same reason, when the
// two do not fit in the retain cap together, the response buffer is the
// one dropped: kept alone, it would be lent to the next request.
func (rt *Runtime) putBuffers(s *slot) {
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
