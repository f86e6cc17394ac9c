package oteltrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/lmigo/lmigo/concurrent/oteltrace"

// backgroundFlushTimeout bounds a flush of WithFlushEvery, so that
// Shutdown never waits on a stuck exporter for longer.
const backgroundFlushTimeout = 10 * time.Second

// awsTraceKey is the string key under which aws-lambda-go, and lmigo too,
// put the trace header in the context: read when the context is not one
// of lmigo's (a Handler run by lambda.Start).
const awsTraceKey = "x-amzn-trace-id"

type flusher interface {
	ForceFlush(ctx context.Context) error
}

type shutdowner interface {
	Shutdown(ctx context.Context) error
}

// Handler is a lambda.Handler that runs each invocation in a span, and a
// concurrent.StreamInvoker, so that lmigo streams what the wrapped handler
// streams. Its Invoke and InvokeStream may be called from many goroutines
// at once, and the bytes they return belong to the caller. Build it with
// Wrap.
type Handler struct {
	inner  concurrent.StreamInvoker
	tracer trace.Tracer
	name   string
	attrs  []attribute.KeyValue // the same for every invocation
	flush  flushPolicy
	every  time.Duration
	fl     flusher    // nil: the provider cannot flush
	sd     shutdowner // nil: nor shut down

	cold atomic.Bool // no invocation has started yet

	// WithFlushEvery: lastFlush is when the last flush began (Unix ns),
	// flushing is set while one runs; mu orders bg.Add against Shutdown's
	// Wait.
	lastFlush atomic.Int64
	flushing  atomic.Bool
	mu        sync.Mutex
	closed    bool
	bg        sync.WaitGroup
}

// Wrap adapts handler, of any form concurrent.Start accepts, with
// concurrent.NewHandler (so its bytes are the caller's and a panic is
// returned as a *concurrent.PanicError), and runs each invocation in a
// server span whose parent is the invocation's trace header. The function's
// name, version, region, log stream and memory size are read from the
// environment once, here.
func Wrap(handler any, opts ...Option) *Handler {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	tp := o.tracerProvider()
	env := func(k string) string { v, _ := o.lookup(k); return v }
	h := &Handler{
		// NewHandler's value is a StreamInvoker, whatever handler is.
		inner:  concurrent.NewHandler(handler, o.handler...).(concurrent.StreamInvoker),
		tracer: tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		name:   env("AWS_LAMBDA_FUNCTION_NAME"),
		flush:  resolveFlush(o.flush, o.lookup),
		every:  o.every,
	}
	h.fl, _ = tp.(flusher)
	h.sd, _ = tp.(shutdowner)
	if h.name == "" {
		h.name = "handler" // a span needs a name; outside Lambda there is none
	}
	h.cold.Store(true)
	h.attrs = append(h.attrs, semconv.CloudProviderAWS, semconv.FaaSName(h.name))
	if v := env("AWS_LAMBDA_FUNCTION_VERSION"); v != "" {
		h.attrs = append(h.attrs, semconv.FaaSVersion(v))
	}
	if v := env("AWS_REGION"); v != "" {
		h.attrs = append(h.attrs, semconv.CloudRegion(v))
	}
	if v := env("AWS_LAMBDA_LOG_STREAM_NAME"); v != "" {
		h.attrs = append(h.attrs, semconv.FaaSInstance(v))
	}
	if mb, err := strconv.Atoi(env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")); err == nil && mb > 0 {
		h.attrs = append(h.attrs, semconv.FaaSMaxMemory(mb<<20))
	}
	h.attrs = append(h.attrs, o.attrs...)
	return h
}

// Invoke runs one invocation in a span. The span's parent is the
// invocation's trace header (concurrent.TraceID), or, without one that
// parses, whatever span ctx carries. A handler error, and a panic, mark the
// span as failed; the error is returned as it is. Under WithFlushEachInvocation
// the provider is flushed before Invoke returns. A reader result is read
// as concurrent.NewHandler's Invoke reads it: up to 6 MiB.
func (h *Handler) Invoke(ctx context.Context, payload []byte) (out []byte, err error) {
	ctx, span := h.start(ctx)
	defer endOnPanic(span)
	out, err = h.inner.Invoke(ctx, payload)
	h.end(ctx, span, err)
	return out, err
}

// InvokeStream runs one invocation in a span, as Invoke does, and returns
// the wrapped handler's answer as it is: its content type, and its bytes,
// or its stream unread, for lmigo to stream. The span of a stream ends
// when the stream does: at its end or its read error (which fails the
// span), or when it is closed before its end (which fails it too).
func (h *Handler) InvokeStream(ctx context.Context, payload []byte) (contentType string, out []byte, body io.Reader, err error) {
	ctx, span := h.start(ctx)
	defer endOnPanic(span)
	contentType, out, body, err = h.inner.InvokeStream(ctx, payload)
	if err == nil && body != nil {
		return contentType, nil, newSpanReader(h, ctx, span, body), nil
	}
	h.end(ctx, span, err)
	return contentType, out, body, err
}

// endOnPanic, deferred, ends span on a panic before it goes on. A
// handler built by NewHandler does not panic; such a panic comes from the
// wrapper's own callees.
func endOnPanic(span trace.Span) {
	if v := recover(); v != nil {
		endPanicked(span, v)
		panic(v)
	}
}

// endPanicked ends span as failed by a panic with v.
func endPanicked(span trace.Span, v any) {
	span.RecordError(fmt.Errorf("panic: %v", v), trace.WithStackTrace(true))
	span.SetStatus(codes.Error, "panic")
	span.End()
}

// end ends an invocation's span, failed if err is not nil, and applies
// the flush policy.
func (h *Handler) end(ctx context.Context, span trace.Span, err error) {
	if err != nil {
		recordError(span, err)
	}
	span.End()
	h.afterInvoke(ctx)
}

func (h *Handler) start(ctx context.Context) (context.Context, trace.Span) {
	header := concurrent.TraceID(ctx)
	if header == "" {
		header, _ = ctx.Value(awsTraceKey).(string)
	}
	if sc, err := ParseHeader(header); err == nil {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	attrs := make([]attribute.KeyValue, 0, len(h.attrs)+5)
	attrs = append(attrs, h.attrs...)
	// Read once per process; later calls return at once.
	if zone, err := concurrent.AvailabilityZoneID(ctx); err == nil {
		attrs = append(attrs, semconv.CloudAvailabilityZone(zone))
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		if lc.AwsRequestID != "" {
			attrs = append(attrs, semconv.FaaSInvocationID(lc.AwsRequestID))
		}
		if arn := lc.InvokedFunctionArn; arn != "" {
			attrs = append(attrs, semconv.CloudResourceID(arn))
			if acct := accountID(arn); acct != "" {
				attrs = append(attrs, semconv.CloudAccountID(acct))
			}
		}
	}
	if h.cold.Load() && h.cold.Swap(false) {
		attrs = append(attrs, semconv.FaaSColdstart(true))
	}
	return h.tracer.Start(ctx, h.name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// accountID is the fifth field of arn:aws:lambda:region:account:function:name.
func accountID(arn string) string {
	f := strings.SplitN(arn, ":", 6)
	if len(f) < 6 || f[0] != "arn" {
		return ""
	}
	return f[4]
}

func recordError(span trace.Span, err error) {
	if pe := (*concurrent.PanicError)(nil); errors.As(err, &pe) {
		span.RecordError(err, trace.WithAttributes(semconv.ExceptionType(fmt.Sprintf("%T", pe.Value))))
		span.SetStatus(codes.Error, "panic")
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// afterInvoke applies the flush policy once the span has ended.
func (h *Handler) afterInvoke(ctx context.Context) {
	if h.fl == nil {
		return
	}
	switch h.flush {
	case flushEach:
		// Bounded by the invocation's deadline: a late flush must not cost
		// the answer.
		_ = h.fl.ForceFlush(ctx)
	case flushEvery:
		now := time.Now().UnixNano()
		if now-h.lastFlush.Load() < int64(h.every) || !h.flushing.CompareAndSwap(false, true) {
			return
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			h.flushing.Store(false)
			return
		}
		h.lastFlush.Store(now)
		h.bg.Add(1)
		h.mu.Unlock()
		go func() {
			defer h.bg.Done()
			defer h.flushing.Store(false)
			fctx, cancel := context.WithTimeout(context.Background(), backgroundFlushTimeout)
			defer cancel()
			_ = h.fl.ForceFlush(fctx)
		}()
	}
}

// Shutdown ends the handler's flushing, waits for a background flush in
// progress, then flushes the provider and shuts it down (when it can: the
// SDK's provider can), so that the spans of the last invocations are
// exported. Call it once, when the runtime has stopped: at SIGTERM, after
// concurrent.Runtime.Run has returned. Spans started later are dropped by
// the provider.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.bg.Wait()
	var errs []error
	if h.fl != nil {
		errs = append(errs, h.fl.ForceFlush(ctx))
	}
	if h.sd != nil {
		errs = append(errs, h.sd.Shutdown(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("oteltrace: shutdown: %w", err)
	}
	return nil
}
