package concurrent

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"github.com/lmigo/lmigo/concurrent/internal/logline"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/pool"
	"github.com/lmigo/lmigo/rapi"
	"go.uber.org/zap"
)

// Runtime serves invocations of one handler from the Runtime API.
type Runtime struct {
	cfg    limits.Config
	opts   options
	h      *handler
	log    *zap.Logger
	client *rapi.Client
	// stallTimeout is the client's, read once: the least wait for a reply
	// after its post (cutMissingReplies).
	stallTimeout time.Duration
	// slots are the slots serving; the overrun watch alone replaces one
	// (overrun.go), under slotsMu, which others that read them from
	// another goroutine hold. overruns are the replaced slots whose
	// handlers still run.
	slots    []*slot
	slotsMu  sync.RWMutex
	overruns []*overrun
	// The overrun watch's own. held: the slots held by a handler that
	// overran, not replaced. wedgedSince: when it began to find every slot
	// so. wedgedDone: whether it ended the process for that.
	held        map[*slot]*overrun
	wedgedSince time.Time
	wedgedDone  bool
	boundLogged atomic.Bool // the bound on overruns was logged as reached
	// workers runs each slot as one long-lived task (runSlot): its size is
	// the number of slot goroutines the runtime may have.
	workers *pool.Workers[*slot]
	// polling is the context the slots poll with, until Run stops polling.
	polling context.Context
	// exited receives each slot once its goroutine has left its loop.
	exited  chan *slot
	baseCtx context.Context
	// handlerLog is the logger of handlers' contexts: a WithLogger one as
	// given, while the runtime's own lines go through log, bounded.
	handlerLog *zap.Logger
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
	emf      *emf.Env        // the handler's metrics (fanout.go)
	idle     idleTracker     // for the idle free (startIdleFree)
	outage   outage          // rate-limits the warnings while /next fails
	mem      memGuard        // memory-aware admission (admission.go)
	left     leftovers       // goroutines that outlived their invocation (leftover.go)
	// setMemoryLimit is debug.SetMemoryLimit (memlimit.go); tests replace
	// it, so that they see the limit the runtime would set without
	// changing their own.
	setMemoryLimit func(int64) int64
}

// New builds a Runtime for handler from the environment. It returns an
// error wrapping ErrConfig when a variable is invalid (every bad variable
// is named) and ErrInvalidHandler when handler has an unsupported form.
func New(handler any, opts ...Option) (*Runtime, error) {
	o := newOptions(opts)
	if len(o.errs) > 0 {
		return nil, errors.Join(o.errs...)
	}
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
	userEMF, stdout := newEMF(cfg, o.stdout)
	rt := &Runtime{
		cfg:         cfg,
		opts:        o,
		h:           h,
		log:         o.logger,
		exited:      make(chan *slot, cfg.Slots),
		baseCtx:     o.baseCtx,
		setTraceEnv: cfg.MaxConcurrency == 1,
		fatal:       make(chan error, 1),
		metrics:     newMetrics(cfg, stdout),
		emf:         userEMF,

		setMemoryLimit: debug.SetMemoryLimit,
	}
	rt.client, err = rapi.New(cfg.RuntimeAPI, append([]rapi.Option{
		rapi.WithMaxRequestBytes(cfg.MaxRequestBytes),
	}, o.rapi...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: AWS_LAMBDA_RUNTIME_API=%q: %w", ErrConfig, cfg.RuntimeAPI, err)
	}
	rt.stallTimeout = rt.client.StallTimeout()
	rt.mem.init()
	rt.idle.init()
	rt.left.every = leftoverEvery
	if rt.log == nil {
		rt.log = newLogger(cfg.LogFormat, cfg.LogLevel, o.stderr)
		rt.handlerLog = rt.log
		if o.own != nil {
			rt.log = newLogger(cfg.LogFormat, cfg.LogLevel, o.own)
		}
	} else {
		// The handler's lines are the user's own; the runtime's are bounded.
		rt.handlerLog = o.logger
		rt.log = logline.Logger(o.logger, errorMessage)
	}
	rt.baseCtx = context.WithValue(rt.baseCtx, emf.EnvKey{}, rt.emf)
	for _, v := range o.values {
		rt.baseCtx = context.WithValue(rt.baseCtx, v.key, v.val)
	}
	rt.slots = make([]*slot, cfg.Slots)
	for i := range rt.slots {
		rt.slots[i] = newSlot(rt)
	}
	rt.held = map[*slot]*overrun{}
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
	// The event Lambda's own runtimes log, in their spelling, as their
	// pool starts on LMI: tools that look for it find ours. Our pool's
	// workers are the slots.
	rt.log.Debug("runtime_worker_pool_initializing",
		zap.Int("workerCount", rt.cfg.Slots),
		zap.Int("executionEnvironmentMaxConcurrency", rt.cfg.MaxConcurrency))
	rt.applyMemoryLimit()
	defer rt.watchExhaustion()()
	rt.logStart()
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
	stopWatch := rt.watchOverruns()
	stopLeftovers := rt.watchLeftovers()

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
	stopWatch() // no slot is replaced from here on
	stopLeftovers()
	drainBy := deadline
	if len(rt.opts.hooks) > 0 {
		drainBy = deadline.Add(-rt.cfg.ShutdownTimeout / hookShare)
	}
	left := rt.drain(drainBy)
	if rt.workers != nil {
		_ = rt.workers.Release(max(time.Until(drainBy), time.Millisecond))
	}
	rt.findLeftovers() // the answered invocations are all in by now
	stopMetrics()      // the last document, after the last invocation
	for _, s := range rt.slots {
		_ = s.conn.Close()
	}
	for _, o := range rt.replacedOverruns() {
		_ = o.s.conn.Close()
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
// number of slot goroutines the runtime may have: the slots, and the
// replaced ones whose handlers overran (LMIGO_MAX_OVERRUNS).
func (rt *Runtime) startSlots() {
	workers, err := pool.NewWorkers(len(rt.slots)+rt.cfg.MaxOverruns, runSlot, pool.WithPanicHandler(rt.slotPanicked))
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
			go runSlot(s)
		}
	}
}

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
			s.lateReply(s.conn.ReadAnswer(ctx))
		case <-ctx.Done():
			rt.log.Warn("shutdown timeout with invocations still in flight",
				zap.Duration("timeout", rt.cfg.ShutdownTimeout), zap.Int("inFlight", len(rt.slots)-i))
			return len(rt.slots) - i
		}
	}
	return 0
}
