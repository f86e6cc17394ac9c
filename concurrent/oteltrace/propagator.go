package oteltrace

import (
	"context"

	"github.com/lmigo/lmigo/concurrent"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Propagator carries the X-Ray trace header (X-Amzn-Trace-Id) in and out
// of a context, as the X-Ray propagator does, without the process
// environment. Inject writes the span ctx carries, or, when it carries
// none, the invocation's own trace header (concurrent.TraceID), so that an
// outgoing call from a handler joins the invocation's trace either way.
// Extract reads the header into a remote span context. Its zero value is
// ready to use, as otel.SetTextMapPropagator(oteltrace.Propagator{}).
type Propagator struct{}

var _ propagation.TextMapPropagator = Propagator{}

// Inject writes X-Amzn-Trace-Id into carrier, or nothing when ctx has no
// valid span context and no invocation trace header.
func (Propagator) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		var err error
		if sc, err = ParseHeader(concurrent.TraceID(ctx)); err != nil {
			return
		}
	}
	carrier.Set(HeaderName, FormatHeader(sc))
}

// Extract returns ctx with the remote span context of carrier's
// X-Amzn-Trace-Id, or ctx as it is when there is none that parses.
func (Propagator) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	sc, err := ParseHeader(carrier.Get(HeaderName))
	if err != nil {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// Fields returns the one header Propagator uses.
func (Propagator) Fields() []string { return []string{HeaderName} }
