package oteltrace_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/lmigo/lmigo/concurrent/oteltrace"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

func TestPropagatorExtractInject(t *testing.T) {
	const h = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	var p oteltrace.Propagator
	in := propagation.HeaderCarrier(http.Header{"X-Amzn-Trace-Id": {h}})
	ctx := p.Extract(context.Background(), in)
	sc := trace.SpanContextFromContext(ctx)
	if sc.TraceID().String() != "5759e988bd862e3fe1be46a994272793" || !sc.IsRemote() {
		t.Fatalf("Extract: %v", sc)
	}
	out := propagation.HeaderCarrier(http.Header{})
	p.Inject(ctx, out)
	if got := out.Get("X-Amzn-Trace-Id"); got != h {
		t.Errorf("Inject = %q, want %q", got, h)
	}
	if got := p.Extract(context.Background(), propagation.HeaderCarrier(http.Header{})); trace.SpanContextFromContext(got).IsValid() {
		t.Error("Extract of no header gave a span context")
	}
	empty := propagation.HeaderCarrier(http.Header{})
	p.Inject(context.Background(), empty)
	if len(empty) != 0 {
		t.Errorf("Inject of nothing wrote %v", empty)
	}
}

// TestPropagatorInHandler: inside a wrapped handler, Inject writes the
// handler's span, a child of the invocation's header; without the wrapper
// it writes the invocation's header itself.
func TestPropagatorInHandler(t *testing.T) {
	tp, exp := recorder(t)
	h, tid, pid := header(3)
	got := make(chan [2]string, 2)
	fn := func(ctx context.Context) error {
		c := propagation.HeaderCarrier(http.Header{})
		oteltrace.Propagator{}.Inject(ctx, c)
		sc, err := oteltrace.ParseHeader(c.Get(oteltrace.HeaderName))
		got <- [2]string{sc.TraceID().String(), sc.SpanID().String()}
		return err
	}
	for _, wrapped := range []bool{true, false} {
		var hd any = fn
		if wrapped {
			hd = oteltrace.Wrap(fn, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup))
		}
		api := serve(t, hd, 1)
		res, err := api.Invoke(context.Background(), rapitest.Request{Payload: []byte(`{}`), TraceID: h})
		if err != nil || res.Err != nil {
			t.Fatalf("wrapped %v: %v %v", wrapped, err, res.Err)
		}
		ids := <-got
		want := pid
		if wrapped {
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			want = spans[0].SpanContext.SpanID().String()
		}
		if ids[0] != tid || ids[1] != want {
			t.Errorf("wrapped %v: injected trace %s span %s, want %s %s", wrapped, ids[0], ids[1], tid, want)
		}
	}
}
