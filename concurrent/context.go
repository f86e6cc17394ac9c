package concurrent

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"go.uber.org/zap"
)

// traceIDKey is the string key aws-lambda-go stores the trace ID under.
// Tracing libraries written for it read the same key.
const traceIDKey = "x-amzn-trace-id"

type invocationKeyType struct{}

var invocationKey invocationKeyType

// lambdaContextProbe answers lambdacontext's (unexported) key and only
// that one, so that invocationContext can answer it for its own
// LambdaContext without a context.WithValue per invocation.
var lambdaContextProbe = lambdacontext.NewContext(context.Background(), new(lambdacontext.LambdaContext))

// invocationContext is one invocation's context: its deadline, its end
// (when the handler returns), its LambdaContext, IDs and loggers. It is
// one allocation where the standard library needs five: WithDeadline's
// timerCtx, timer and two closures, and a WithValue. What only some
// handlers use is made on first use. The Done channel and the deadline's
// timer come when Done is called, as a child context does; the loggers
// come with the first line.
//
// When the parent can be cancelled (WithContext), parent is instead a
// context.WithDeadline of it, to which Deadline, Done and Err defer.
//
// It also holds out, the Buffer the handler writes its response into
// (slot.serve, handler.runLent): the invocation's own, never lent
// again, at no allocation of its own. It is kept within 288 bytes (a size
// class; TestAllocsInvocationContext).
type invocationContext struct {
	parent   context.Context
	deadline int64              // Unix nanoseconds; 0: none
	stop     context.CancelFunc // non-nil: parent is derived and carries the cancellation
	lc       lambdacontext.LambdaContext
	traceID  string
	// base is the runtime's logger. logger adds this invocation's IDs to
	// it on first use, so an invocation that logs nothing pays nothing.
	// slogger is the same for log/slog.
	base *zap.Logger

	mu      sync.Mutex
	ended   ctxEnd // set once
	done    *ctxDone
	logger  *zap.Logger
	slogger *slog.Logger

	out Buffer

	// ext is what the handler started beside its answer: metrics, fan-out
	// (fanout.go). Made on first use; endedExt once the invocation ended
	// without one.
	ext *invocationExt
}

// ctxEnd is how an invocation's context ended.
type ctxEnd uint8

const (
	notEnded ctxEnd = iota
	endCanceled
	endDeadline
)

func (e ctxEnd) err() error {
	switch e {
	case endCanceled:
		return context.Canceled
	case endDeadline:
		return context.DeadlineExceeded
	}
	return nil
}

// ctxDone is the part of an invocationContext that a Done call makes.
type ctxDone struct {
	ch    chan struct{}
	timer *time.Timer
	after []*afterFunc
}

type afterFunc struct{ f func() }

// closedDone is the Done channel of a context that ended before anyone
// asked for it.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// newInvocation builds the context of inv. The caller ends it with cancel
// once the invocation is answered.
func newInvocation(parent context.Context, deadline time.Time, lc *lambdacontext.LambdaContext, traceID string, base *zap.Logger) *invocationContext {
	c := &invocationContext{parent: parent, lc: *lc, traceID: traceID, base: base}
	if !deadline.IsZero() {
		c.deadline = deadline.UnixNano()
	}
	switch {
	case parent.Done() == nil:
	case deadline.IsZero():
		c.parent, c.stop = context.WithCancel(parent)
	default:
		c.parent, c.stop = context.WithDeadline(parent, deadline)
	}
	return c
}

func (c *invocationContext) Deadline() (time.Time, bool) {
	if c.stop != nil {
		return c.parent.Deadline()
	}
	if c.deadline == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, c.deadline), true
}

func (c *invocationContext) Done() <-chan struct{} {
	if c.stop != nil {
		return c.parent.Done()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	d := c.lazyDone()
	if d == nil {
		return closedDone
	}
	return d.ch
}

func (c *invocationContext) Err() error {
	if c.stop != nil {
		return c.parent.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	return c.ended.err()
}

// expireLocked ends the context if its deadline has passed, so that Done
// and Err tell the truth even before the timer has fired (or when none was
// armed).
func (c *invocationContext) expireLocked() {
	if c.ended == notEnded && c.deadline != 0 && time.Now().UnixNano() >= c.deadline {
		c.endLocked(endDeadline)
	}
}

// lazyDone makes the Done channel and arms the deadline's timer; nil once
// the context has ended without them.
func (c *invocationContext) lazyDone() *ctxDone {
	if c.done == nil && c.ended == notEnded {
		c.done = &ctxDone{ch: make(chan struct{})}
		if c.deadline != 0 {
			c.done.timer = time.AfterFunc(time.Until(time.Unix(0, c.deadline)), c.expire)
		}
	}
	return c.done
}

func (c *invocationContext) expire() { c.end(endDeadline) }

// cancel ends the invocation's context; the runtime calls it once the
// handler has returned.
func (c *invocationContext) cancel() {
	if c.stop != nil {
		c.stop()
		return
	}
	c.end(endCanceled)
}

func (c *invocationContext) end(e ctxEnd) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(e)
}

func (c *invocationContext) endLocked(e ctxEnd) {
	if c.ended != notEnded {
		return
	}
	c.ended = e
	if d := c.done; d != nil {
		close(d.ch)
		if d.timer != nil {
			d.timer.Stop()
		}
		for _, a := range d.after {
			go a.f() // as context.AfterFunc does
		}
		d.after = nil
	}
}

// AfterFunc lets contexts derived from an invocation's be cancelled with
// it without a goroutine each (the context package uses it when a parent
// has it).
func (c *invocationContext) AfterFunc(f func()) (stop func() bool) {
	if c.stop != nil {
		return context.AfterFunc(c.parent, f)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	if c.ended != notEnded {
		// Ended already (its after-functions have run, if it had a Done
		// channel): run f now, as context.AfterFunc does.
		go f()
		return func() bool { return false }
	}
	d := c.lazyDone()
	a := &afterFunc{f: f}
	d.after = append(d.after, a)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if i := slices.Index(d.after, a); i >= 0 {
			d.after = slices.Delete(d.after, i, i+1)
			return true
		}
		return false
	}
}

func (c *invocationContext) Value(key any) any {
	switch key {
	case invocationKey:
		return c
	case traceIDKey:
		return c.traceID
	case emf.Key{}:
		return c.metricSet()
	}
	if lambdaContextProbe.Value(key) != nil {
		return &c.lc
	}
	return c.parent.Value(key)
}

func (c *invocationContext) String() string { return "lmigo invocation " + c.lc.AwsRequestID }

func fromContext(ctx context.Context) *invocationContext {
	c, _ := ctx.Value(invocationKey).(*invocationContext)
	return c
}

// RequestID returns the request ID of the invocation ctx belongs to, or ""
// outside an invocation.
func RequestID(ctx context.Context) string {
	if c := fromContext(ctx); c != nil {
		return c.lc.AwsRequestID
	}
	return ""
}

// TraceID returns the X-Ray trace header of the invocation ctx belongs to
// ("Root=1-...;Parent=...;Sampled=1"), or "". Pass it on yourself as
// X-Amzn-Trace-Id: one process serves many invocations, so
// _X_AMZN_TRACE_ID is not set. It is also under the context key
// "x-amzn-trace-id", where aws-lambda-go's tracing libraries look.
func TraceID(ctx context.Context) string {
	if c := fromContext(ctx); c != nil {
		return c.traceID
	}
	return ""
}

// TenantID returns the tenant ID of the invocation ctx belongs to, or "".
func TenantID(ctx context.Context) string {
	if c := fromContext(ctx); c != nil {
		return c.lc.TenantID
	}
	return ""
}

// Logger returns a zap logger whose lines carry the IDs of the invocation
// ctx belongs to: requestId, traceId and tenantId. It is built on an
// invocation's first call and cached. Outside an invocation it returns the
// process logger. It writes Lambda's format to stderr, at
// AWS_LAMBDA_LOG_LEVEL, each line in one write. Its Fatal ends every
// invocation in flight: prefer Error.
func Logger(ctx context.Context) *zap.Logger {
	if c := fromContext(ctx); c != nil {
		return c.zapLogger()
	}
	return defaultLogger()
}

func (c *invocationContext) zapLogger() *zap.Logger {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logger == nil {
		c.logger = c.base.With(appendInvocationFields(make([]zap.Field, 0, 3), c.lc.AwsRequestID, c.traceID, c.lc.TenantID)...)
	}
	return c.logger
}

func (c *invocationContext) slog() *slog.Logger {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slogger == nil {
		c.slogger = slog.New(&slogHandler{inv: c})
	}
	return c.slogger
}

func (c *invocationContext) extension() *invocationExt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ext == nil {
		c.ext = &invocationExt{}
	}
	return c.ext
}

// metricSet is the invocation's metrics (emf.Key), made on first use.
func (c *invocationContext) metricSet() *emf.Set {
	x := c.extension()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.metrics == nil {
		if x.ended {
			return emf.Ended
		}
		env, _ := c.parent.Value(emf.EnvKey{}).(*emf.Env)
		x.metrics = emf.NewSet(env)
	}
	return x.metrics
}
