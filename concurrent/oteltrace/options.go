package oteltrace

import (
	"os"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Option configures Wrap.
type Option func(*options)

type options struct {
	provider trace.TracerProvider
	attrs    []attribute.KeyValue
	lookup   func(string) (string, bool)
	handler  []concurrent.Option
	flush    flushPolicy
	every    time.Duration
}

// flushPolicy is when Invoke asks the provider to flush.
type flushPolicy uint8

const (
	// flushAuto: each invocation when the environment is frozen between
	// invocations (on-demand Lambda), otherwise never (LMI).
	flushAuto flushPolicy = iota
	flushNever
	flushEach
	flushEvery
)

func defaultOptions() options {
	return options{lookup: os.LookupEnv}
}

// WithTracerProvider sets the provider of the spans; the default is
// otel.GetTracerProvider() at the time of Wrap. A provider with
// ForceFlush(ctx) error and Shutdown(ctx) error methods, as the SDK's
// *sdktrace.TracerProvider has, is flushed by the flush policy and by
// Handler.Shutdown; the global provider is not, as it has neither.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.provider = tp }
}

// WithAttributes adds attributes to every span, such as the trigger
// (semconv.FaaSTriggerHTTP for a function behind API Gateway), which the
// handler's signature does not tell.
func WithAttributes(kv ...attribute.KeyValue) Option {
	return func(o *options) { o.attrs = append(o.attrs, kv...) }
}

// WithLookupEnv replaces os.LookupEnv for the environment Wrap reads once
// (AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_VERSION, AWS_REGION,
// AWS_LAMBDA_LOG_STREAM_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
// AWS_LAMBDA_INITIALIZATION_TYPE), as concurrent.WithLookupEnv does for the
// runtime.
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return func(o *options) { o.lookup = lookup }
}

// WithHandlerOptions passes options to concurrent.NewHandler, which adapts
// the handler (the JSON options, concurrent.WithCodec).
func WithHandlerOptions(opts ...concurrent.Option) Option {
	return func(o *options) { o.handler = append(o.handler, opts...) }
}

// WithFlushEvery makes the handler flush the provider at most once every
// d, in the background: when an invocation ends and d has passed since the
// last flush began, one flush starts, and no invocation waits for it. It
// bounds how long a span can wait in a BatchSpanProcessor whose own batch
// timeout is longer. d <= 0 turns flushing off, as WithoutFlush.
func WithFlushEvery(d time.Duration) Option {
	return func(o *options) {
		o.flush, o.every = flushEvery, d
		if d <= 0 {
			o.flush = flushNever
		}
	}
}

// WithFlushEachInvocation makes Invoke flush the provider after each
// invocation, before it returns: what a function needs where the
// environment is frozen once it has answered (on-demand Lambda), and what
// Wrap does there by default. Under LMI it makes concurrent invocations
// wait for one another's exports; it is not the default there.
func WithFlushEachInvocation() Option {
	return func(o *options) { o.flush = flushEach }
}

// WithoutFlush leaves exporting to the span processor (a
// BatchSpanProcessor exports in the background) and to Handler.Shutdown;
// it is the default under LMI.
func WithoutFlush() Option {
	return func(o *options) { o.flush = flushNever }
}

// resolveFlush turns flushAuto into a policy from the initialisation
// type: Lambda freezes on-demand, provisioned and SnapStart environments
// between invocations, so spans not exported before the answer may wait
// for the next thaw or be lost. LMI environments, and processes outside
// Lambda, are not frozen.
func resolveFlush(p flushPolicy, lookup func(string) (string, bool)) flushPolicy {
	if p != flushAuto {
		return p
	}
	switch v, _ := lookup("AWS_LAMBDA_INITIALIZATION_TYPE"); v {
	case "on-demand", "provisioned-concurrency", "snap-start":
		return flushEach
	}
	return flushNever
}

func (o *options) tracerProvider() trace.TracerProvider {
	if o.provider != nil {
		return o.provider
	}
	return otel.GetTracerProvider()
}
