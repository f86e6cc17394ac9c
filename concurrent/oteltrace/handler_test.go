package oteltrace_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/oteltrace"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// header is the trace header of invocation i: trace and parent IDs of its
// own.
func header(i int) (h, traceID, parentID string) {
	traceID = fmt.Sprintf("%08x%024x", 0x5759e988+i, uint64(0x3d862e3fe1be46a9)+uint64(i))
	parentID = fmt.Sprintf("%016x", 0x53995c3f42cd8ad8+i)
	return fmt.Sprintf("Root=1-%s-%s;Parent=%s;Sampled=1", traceID[:8], traceID[8:], parentID), traceID, parentID
}

// recorder is a provider that exports each span as it ends, into memory.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(s.Attributes))
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestSpanJoinsInvocationTrace: each invocation's span is a child of the
// span in its own Lambda-Runtime-Trace-Id, with N invocations in flight at
// once, and carries the FaaS attributes.
func TestSpanJoinsInvocationTrace(t *testing.T) {
	for _, n := range []int{1, 8} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			tp, exp := recorder(t)
			var inFlight atomic.Int32
			all := make(chan struct{})
			var once sync.Once
			fn := func(ctx context.Context, s string) (string, error) {
				// Hold each invocation until all n are in flight (or a
				// while has passed), so that their spans overlap.
				if inFlight.Add(1) == int32(n) {
					once.Do(func() { close(all) })
				}
				select {
				case <-all:
				case <-time.After(5 * time.Second):
				}
				if !trace.SpanFromContext(ctx).SpanContext().IsValid() {
					return "", errors.New("no span in the handler's context")
				}
				return s, nil
			}
			api := serve(t, oteltrace.Wrap(fn, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup)), n)

			type want struct{ traceID, parentID string }
			wants := make(map[string]want, n) // by request ID
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					h, tid, pid := header(i)
					res, err := api.Invoke(context.Background(), rapitest.Request{Payload: fmt.Appendf(nil, `"%d"`, i), TraceID: h})
					if err != nil || res.Err != nil {
						t.Errorf("invocation %d: %v %v", i, err, res.Err)
						return
					}
					if got := string(res.Body); got != fmt.Sprintf(`"%d"`, i) {
						t.Errorf("invocation %d answered %s", i, got)
					}
					mu.Lock()
					wants[res.RequestID] = want{tid, pid}
					mu.Unlock()
				})
			}
			wg.Wait()

			spans := exp.GetSpans()
			if len(spans) != n {
				t.Fatalf("%d spans, want %d", len(spans), n)
			}
			traces := map[trace.TraceID]bool{}
			for _, s := range spans {
				a := attrs(s)
				id := a[semconv.FaaSInvocationIDKey].AsString()
				w, ok := wants[id]
				if !ok {
					t.Errorf("span %s: faas.invocation_id %q is no invocation's", s.Name, id)
					continue
				}
				traces[s.SpanContext.TraceID()] = true
				if got := s.SpanContext.TraceID().String(); got != w.traceID {
					t.Errorf("%s: trace ID %s, want %s", id, got, w.traceID)
				}
				if got := s.Parent.SpanID().String(); got != w.parentID || !s.Parent.IsRemote() {
					t.Errorf("%s: parent %s (remote %v), want remote %s", id, got, s.Parent.IsRemote(), w.parentID)
				}
				if s.SpanKind != trace.SpanKindServer || s.Name != "lmigo-fake" || !s.SpanContext.IsSampled() {
					t.Errorf("%s: kind %v name %q sampled %v", id, s.SpanKind, s.Name, s.SpanContext.IsSampled())
				}
				for k, v := range map[attribute.Key]string{
					semconv.CloudProviderKey:   "aws",
					semconv.CloudRegionKey:     "us-east-1",
					semconv.CloudResourceIDKey: rapitest.DefaultFunctionARN,
					semconv.CloudAccountIDKey:  "123456789012",
					semconv.FaaSNameKey:        "lmigo-fake",
					semconv.FaaSVersionKey:     "$LATEST",
					semconv.FaaSInstanceKey:    testEnv["AWS_LAMBDA_LOG_STREAM_NAME"],
				} {
					if got := a[k].String(); got != v {
						t.Errorf("%s: %s = %q, want %q", id, k, got, v)
					}
				}
				if got := a[semconv.FaaSMaxMemoryKey].AsInt64(); got != 512<<20 {
					t.Errorf("%s: faas.max_memory = %d", id, got)
				}
			}
			if len(traces) != n {
				t.Errorf("%d distinct trace IDs among %d invocations", len(traces), n)
			}
		})
	}
}

// TestSpanRecordsFailure: a handler error and a panic fail their span and
// their invocation, as without the wrapper.
func TestSpanRecordsFailure(t *testing.T) {
	tests := []struct {
		name string
		fn   func(context.Context, string) (string, error)
		msg  string
	}{
		{"error", func(context.Context, string) (string, error) { return "", errors.New("no such user") }, "no such user"},
		{"panic", func(context.Context, string) (string, error) { panic("boom") }, "panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, exp := recorder(t)
			api := serve(t, oteltrace.Wrap(tt.fn, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup)), 2)
			h, tid, _ := header(1)
			res, err := api.Invoke(context.Background(), rapitest.Request{Payload: []byte(`"x"`), TraceID: h})
			if err != nil || res.Err == nil {
				t.Fatalf("Invoke: %v, %+v; want a function error", err, res)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Status.Code != codes.Error || s.Status.Description != tt.msg {
				t.Errorf("status %v %q, want Error %q", s.Status.Code, s.Status.Description, tt.msg)
			}
			if len(s.Events) != 1 || s.Events[0].Name != semconv.ExceptionEventName {
				t.Errorf("events %+v, want one exception", s.Events)
			}
			if s.SpanContext.TraceID().String() != tid {
				t.Errorf("trace ID %s, want %s", s.SpanContext.TraceID(), tid)
			}
		})
	}
}

// TestSpanWithoutHeader: without a trace header that parses, the span
// starts a trace of its own (or joins the span ctx carries).
func TestSpanWithoutHeader(t *testing.T) {
	tp, exp := recorder(t)
	h := oteltrace.Wrap(func(context.Context) error { return nil }, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup))
	if _, err := h.Invoke(context.Background(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	ctx, parent := tp.Tracer("test").Start(context.Background(), "caller")
	if _, err := h.Invoke(ctx, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	if spans[0].Parent.IsValid() {
		t.Errorf("first span has parent %v, want none", spans[0].Parent)
	}
	if spans[1].Parent.SpanID() != spans[2].SpanContext.SpanID() {
		t.Errorf("second span's parent %v, want the caller's span %v", spans[1].Parent.SpanID(), spans[2].SpanContext.SpanID())
	}
	if got := attrs(spans[0])[semconv.FaaSColdstartKey]; !got.AsBool() {
		t.Errorf("first span: faas.coldstart = %v, want true", got.String())
	}
	if _, ok := attrs(spans[1])[semconv.FaaSColdstartKey]; ok {
		t.Error("second span has faas.coldstart")
	}
}
