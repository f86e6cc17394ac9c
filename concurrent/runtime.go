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
	free    chan *slot
	workers *pool.Workers[*slot]
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
// the next. It belongs to exactly one goroutine at a time: the poller from
// taking it off the free list until the hand-off, then the worker until it
// is put back.
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
		free:        make(chan *slot, cfg.Workers),
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
	// The slot goes back to the free list only after the worker has counted
	// itself idle (WithDone), so a poller holding a slot never finds the
	// pool full.
	rt.workers, err = pool.NewWorkers(cfg.Workers, rt.serve, pool.WithDone(rt.release))
	if err != nil {
		return nil, fmt.Errorf("concurrent: worker pool: %w", err)
	}
	rt.slots = make([]*slot, cfg.Workers)
	for i := range rt.slots {
		s := &slot{conn: client.Conn(), bufs: pool.NewBuffers(cfg.BufferRetainBytes)}
		s.conn.QueueNext(true) // see send
		s.conn.QueueNextIf(rt.mayQueue)
		s.conn.LazyAnswer(true)
		rt.slots[i] = s
		rt.free <- s
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
	rt.connect(pollCtx)
	var pollers sync.WaitGroup
	for range rt.slots {
		pollers.Go(func() { rt.poll(pollCtx) })
	}

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
	pollers.Wait()
	drainBy := deadline
	if len(rt.opts.hooks) > 0 {
		drainBy = deadline.Add(-rt.cfg.ShutdownTimeout / hookShare)
	}
	left := rt.drain(drainBy)
	_ = rt.workers.Release(max(time.Until(drainBy), time.Millisecond))
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
// pollers start. A poller that dialed would keep the stack the dial grew
// (16 KiB instead of 8) for as long as it polls. It stops at the first
// error, which the pollers then meet and report as they would.
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

// drain waits for the invocations in flight to give their slots back, and
// returns how many are still out at the deadline. It reads the reply to
// each slot's last answer if the slot's poll did not (rapi.Conn.ReadAnswer):
// an answer the Runtime API accepted is then not left unconfirmed.
func (rt *Runtime) drain(deadline time.Time) int {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for i := range rt.slots {
		select {
		case s := <-rt.free:
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

// poll takes a free slot, then fetches an invocation into it and hands it
// to a worker. Taking the slot first is what keeps polls plus invocations
// in flight at or below N.
func (rt *Runtime) poll(ctx context.Context) {
	for {
		var s *slot
		select {
		case s = <-rt.free:
		case <-ctx.Done():
			return
		}
		// Held back while memory is high, unless the poll is out already.
		if !s.conn.Queued() && !rt.admit(ctx, s) {
			rt.freeSlot(s)
			return
		}
		if !rt.next(ctx, s) {
			rt.freeSlot(s)
			return
		}
		if err := rt.workers.Invoke(s); err != nil {
			// Unreachable while workers == slots; serving here keeps the
			// invocation rather than losing it.
			logInvocation(rt.log, zap.ErrorLevel, &s.inv, "worker pool refused an invocation", zap.Error(err))
			rt.serve(s)
			rt.release(s)
		}
	}
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
		// Full jitter keeps N pollers from retrying in lockstep.
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

// serve runs one invocation on a worker and answers it exactly once
// (answer.go). The pool calls release afterwards.
func (rt *Runtime) serve(s *slot) {
	inv := &s.inv
	s.resp = s.bufs.Get()
	s.ended = false
	rt.metrics.begin()
	defer rt.metrics.end()
	rt.idle.begin()
	defer func() { rt.idle.end(idleClock()) }()
	// Panics are recovered by the handler adapter; runtime.Goexit cannot
	// be, and leaves serve with the invocation unanswered.
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
// does not hand to a worker, counts it as one in the metrics, and gives
// the slot's buffers back.
func (rt *Runtime) failUnserved(s *slot, errorType string, err error) {
	rt.metrics.begin()
	rt.fail(s, errorType, err)
	rt.metrics.end()
	rt.putBuffers(s)
}

func (rt *Runtime) release(s *slot) {
	rt.putBuffers(s)
	rt.freeSlot(s)
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
