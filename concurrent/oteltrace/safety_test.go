package oteltrace_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// flushEachStandIn stands in for otellambda.WrapHandler
// (go.opentelemetry.io/contrib/instrumentation/github.com/aws/aws-lambda-go/otellambda,
// not available to this module), as its documentation describes it: it
// wraps a lambda.Handler, starts a span, calls Invoke, ends the span and
// force-flushes the provider before it returns Invoke's bytes. Written
// here for the test; none of its code is otellambda's.
type flushEachStandIn struct {
	inner  lambda.Handler
	tracer trace.Tracer
	tp     *sdktrace.TracerProvider
}

func (w flushEachStandIn) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	ctx, span := w.tracer.Start(ctx, "handler", trace.WithSpanKind(trace.SpanKindServer))
	out, err := w.inner.Invoke(ctx, payload)
	span.End()
	_ = w.tp.ForceFlush(ctx)
	return out, err
}

type echo struct {
	ID  int    `json:"id"`
	Pad string `json:"pad"`
}

func echoFn(_ context.Context, e echo) (echo, error) { return e, nil }

// wantEcho is invocation i's payload, and so its answer: distinct in
// content and length.
func wantEcho(i int) []byte {
	return fmt.Appendf(nil, `{"id":%d,"pad":%q}`, i, strings.Repeat(string(rune('a'+i%26)), i%97))
}

// wrongAnswers serves inner through the stand-in at N=n against the fake,
// sends count invocations with distinct payloads, n at a time, and counts
// the answers that are not the invocation's own.
func wrongAnswers(t *testing.T, inner lambda.Handler, n, count int) (wrong int64) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	api := serve(t, flushEachStandIn{inner: inner, tracer: tp.Tracer("test"), tp: tp}, n)

	var next atomic.Int64
	var bad atomic.Int64
	var example atomic.Value
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= count {
					return
				}
				want := wantEcho(i)
				res, err := api.Invoke(context.Background(), rapitest.Request{Payload: want})
				if err != nil || res.Err != nil {
					t.Errorf("invocation %d: %v %v", i, err, res.Err)
					return
				}
				if !bytes.Equal(res.Body, want) {
					bad.Add(1)
					example.CompareAndSwap(nil, fmt.Sprintf("sent %s, answered %s", want, res.Body))
				}
			}
		})
	}
	wg.Wait()
	if v := example.Load(); v != nil {
		t.Logf("a wrong answer: %s", v)
	}
	_ = tp.ForceFlush(context.Background())
	if got := len(exp.GetSpans()); got != count {
		t.Errorf("%d spans exported, want %d", got, count)
	}
	return bad.Load()
}

// TestFlushEachSafeWithNewHandler: a wrapper that ends its span and
// flushes before it returns the bytes (otellambda's way) is safe around
// concurrent.NewHandler, whose bytes are the caller's: 10,000
// invocations at N=64, each answered with its own payload.
func TestFlushEachSafeWithNewHandler(t *testing.T) {
	const n, count = 64, 10_000
	wrong := wrongAnswers(t, concurrent.NewHandler(echoFn), n, count)
	t.Logf("through concurrent.NewHandler: %d wrong answers of %d at N=%d", wrong, count, n)
	if wrong != 0 {
		t.Errorf("%d wrong answers of %d, want 0", wrong, count)
	}
}
