package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
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
	fatal    chan error
	metrics  *runtimeMetrics // nil unless LMIGO_METRICS=emf
	idle     idleTracker     // for the idle free (startIdleFree)
	outage   outage          // rate-limits the warnings while /next fails
	mem      memGuard        // memory-aware admission (admission.go)
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
	// pollQueued: the last post queued the slot's next /next (post), so
	// the poller must read it, whatever the memory.
	pollQueued bool
}

// New builds a Runtime for handler from the environment. It returns an
// error wrapping ErrConfig when a variable is invalid (every bad variable
// is named) and ErrInvalidHandler when handler has an unsupported form.
func New(handler any, opts ...Option) (*Runtime, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := limits.FromEnv(o.lookup)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if o.handler.codec, err = resolveCodec(cfg.JSONCodec, o.codec, o.handler); err != nil {
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
		metrics:     newMetrics(cfg),
	}
	if rt.log == nil {
		rt.log = newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
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
		s.conn.LazyAnswer(true) // see post
		rt.slots[i] = s
		rt.free <- s
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
	began := time.Now()
	rt.stopping.Store(true)
	stopPolling()
	pollers.Wait()
	// One budget for the whole shutdown: Lambda kills the process about
	// 600 ms after SIGTERM.
	deadline := time.Now().Add(rt.cfg.ShutdownTimeout)
	left := rt.drain(deadline)
	_ = rt.workers.Release(max(time.Until(deadline), time.Millisecond))
	stopMetrics() // the last document, after the last invocation
	for _, s := range rt.slots {
		_ = s.conn.Close()
	}
	if err == nil {
		rt.log.Info("runtime stopped", zap.NamedError("cause", context.Cause(ctx)),
			zap.Int("inFlightLeft", left), zap.Duration("shutdown", time.Since(began)))
	}
	_ = rt.log.Sync()
	return err
}

// drain waits for the invocations in flight to give their slots back, and
// returns how many are still out at the deadline.
func (rt *Runtime) drain(deadline time.Time) int {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for i := range rt.slots {
		select {
		case <-rt.free:
		case <-timer.C:
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
		if !s.pollQueued && !rt.admit(ctx) {
			rt.free <- s
			return
		}
		s.pollQueued = false
		if !rt.next(ctx, s) {
			rt.free <- s
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
		answered := s.inv.RequestID // the slot's last invocation, if any
		err := s.conn.Next(ctx, &s.inv)
		s.req.B = s.inv.Payload
		switch {
		case err == nil:
			rt.outage.ok(rt.log)
			return true
		case ctx.Err() != nil:
			return false
		case errors.Is(err, rapi.ErrPayloadTooLarge):
			rt.failUnserved(s, "Runtime.RequestTooLarge",
				fmt.Errorf("request payload larger than %d bytes (LMIGO_MAX_REQUEST_BYTES)", rt.cfg.MaxRequestBytes))
			continue
		case errors.Is(err, rapi.ErrRuntimeAPI):
			rt.stop(err)
			return false
		case errors.As(err, new(*rapi.AnswerError)):
			// The answer to the slot's last post (see post). The queued
			// poll is read next, or sent again if the connection broke.
			rt.log.Warn("the Runtime API did not accept the answer", zap.String(keyRequestID, answered), zap.Error(err))
			continue
		case s.inv.RequestID != "":
			// The answer broke off after its request ID: the invocation
			// was handed out, and only this runtime can end it before
			// its deadline. No backoff: the /error has a poll queued
			// behind it, which must not wait while an invocation may be
			// handed to it (if the /error failed, so does that poll).
			rt.failUnreadable(s, err)
			continue
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

// serve runs one invocation on a worker and answers it exactly once. The
// pool calls release afterwards.
func (rt *Runtime) serve(s *slot) {
	inv := &s.inv
	s.resp = s.bufs.Get()
	rt.metrics.begin()
	defer rt.metrics.end()
	rt.idle.begin()
	defer func() { rt.idle.end(idleClock()) }()

	if inv.DeadlineErr != nil {
		rt.failInvocation(s, "Runtime.InvalidDeadline", inv.DeadlineErr)
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
			rt.failInvocation(s, "Runtime.InvalidClientContext",
				fmt.Errorf("Lambda-Runtime-Client-Context is not valid JSON: %w", err))
			return
		}
	}
	if inv.CognitoIdentity != "" {
		if err := json.Unmarshal([]byte(inv.CognitoIdentity), &lc.Identity); err != nil {
			rt.failInvocation(s, "Runtime.InvalidCognitoIdentity",
				fmt.Errorf("Lambda-Runtime-Cognito-Identity is not valid JSON: %w", err))
			return
		}
	}
	if rt.setTraceEnv {
		_ = os.Setenv("_X_AMZN_TRACE_ID", inv.TraceID)
	}

	contentType, body, direct, err := rt.call(ctx, s)
	if body != nil {
		rt.stream(s, contentType, body) // while ctx lives: body may need it
		return
	}
	ctx.cancel()

	// direct is the handler's own result (a json.RawMessage), borrowed
	// until the post returns; otherwise the response is in s.resp.
	resp := s.resp.B
	if direct != nil {
		resp = direct
	}
	if err == nil && len(resp) > rt.cfg.MaxResponseBytes {
		err = fmt.Errorf("%w: %d bytes, the limit is %d (LMIGO_MAX_RESPONSE_BYTES)",
			ErrResponseTooLarge, len(resp), rt.cfg.MaxResponseBytes)
		rt.failInvocation(s, "Function.ResponseSizeTooLarge", err)
		return
	}
	if err != nil {
		s.resp.Reset()
		errorType := writeErrorBody(s.resp, err)
		rt.metrics.failed(err)
		logFailure(rt.log, inv, errorType, err)
		rt.post(s, func(ctx context.Context) error {
			return s.conn.Fail(ctx, inv, errorType, s.resp.B, nil)
		})
		return
	}
	rt.post(s, func(ctx context.Context) error {
		return s.conn.Respond(ctx, inv, resp, contentType)
	})
}

// call runs the handler. Panics are recovered by the handler adapter;
// runtime.Goexit cannot be, so a deferred check answers the invocation
// before the goroutine ends (the pool still releases the slot). A result
// to stream comes back as body, unread, and one to send from the handler's
// own bytes as direct (handler.run).
func (rt *Runtime) call(ctx context.Context, s *slot) (contentType string, body io.Reader, direct []byte, err error) {
	returned := false
	defer func() {
		if !returned {
			rt.failInvocation(s, "Runtime.HandlerExited", errors.New("the handler called runtime.Goexit"))
		}
	}()
	contentType, body, direct, err = rt.h.run(ctx, s.inv.Payload, s.resp)
	returned = true
	return contentType, body, direct, err
}

// failInvocation answers the invocation in s with an error the runtime
// itself detected.
func (rt *Runtime) failInvocation(s *slot, errorType string, err error) {
	if s.resp == nil {
		s.resp = s.bufs.Get()
	}
	s.resp.Reset()
	writeErrorBody(s.resp, messages.InvokeResponse_Error{Message: err.Error(), Type: errorType})
	rt.metrics.failed(nil)
	logFailure(rt.log, &s.inv, errorType, err)
	rt.post(s, func(ctx context.Context) error {
		return s.conn.Fail(ctx, &s.inv, errorType, s.resp.B, nil)
	})
}

// failUnserved answers, with an error, an invocation that next read but
// does not hand to a worker, counts it as one in the metrics, and gives
// the slot's buffers back.
func (rt *Runtime) failUnserved(s *slot, errorType string, err error) {
	rt.metrics.begin()
	rt.failInvocation(s, errorType, err)
	rt.metrics.end()
	rt.putBuffers(s)
}

// post sends an answer. A transport error is retried once on a fresh
// connection: if the first attempt did reach the Runtime API, the retry
// gets a harmless 400.
//
// While the runtime runs, the slot's next /next is queued on the same
// connection right behind the answer, so the Runtime API has the poll the
// moment the caller has its response; the slot's next poller only reads
// it. That closes the gap in which LMI throttles an invoke arriving right
// after a response, and never holds more polls than slots: the poll is
// the slot's own, and the server only takes it after the answer. The
// answer itself (a 202, as a rule) is then read by that poller, with the
// next invocation (rapi.Conn.LazyAnswer): waking up for it here would take
// CPU from the Runtime API just when it registers the poll. A refusal is
// logged from there; a 5xx still stops the runtime.
func (rt *Runtime) post(s *slot, send func(context.Context) error) {
	rt.queueNext(s)
	ctx := context.Background()
	err := send(ctx)
	if err != nil && errors.Is(err, rapi.ErrTransport) {
		err = send(ctx)
	}
	switch {
	case err == nil:
	case errors.Is(err, rapi.ErrRuntimeAPI):
		rt.stop(err)
	default:
		logInvocation(rt.log, zap.WarnLevel, &s.inv, "the Runtime API did not accept the answer", zap.Error(err))
	}
}

// queueNext sets whether the slot's next /next goes out behind its answer
// (post, stream): not while stopping, nor while memory holds new
// invocations back (admission.go). pollQueued tells the slot's next poller.
func (rt *Runtime) queueNext(s *slot) {
	s.pollQueued = !rt.stopping.Load() && !rt.holding()
	s.conn.QueueNext(s.pollQueued)
}

func (rt *Runtime) release(s *slot) {
	rt.putBuffers(s)
	rt.free <- s
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
