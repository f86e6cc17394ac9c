package oteltrace_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/oteltrace"
	"github.com/lmigo/lmigo/rapi/rapitest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// slowExporter takes a millisecond per export, as a collector on the
// network might.
type slowExporter struct {
	exports, spans atomic.Int64
}

func (e *slowExporter) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	time.Sleep(time.Millisecond)
	e.exports.Add(1)
	e.spans.Add(int64(len(s)))
	return nil
}

func (e *slowExporter) Shutdown(context.Context) error { return nil }

// BenchmarkFlushPolicy: invocations at N=64 through Wrap and a
// BatchSpanProcessor whose exporter takes 1 ms per export, under each
// flush policy. "each" is otellambda's (a ForceFlush before every
// answer); "batch" is Wrap's default under LMI (the processor exports in
// the background); "every=100ms" adds a background flush at most every
// 100 ms. The last flush is inside the timing, so every span is exported.
func BenchmarkFlushPolicy(b *testing.B) {
	const n = 64
	policies := []struct {
		name string
		opt  oteltrace.Option
	}{
		{"each", oteltrace.WithFlushEachInvocation()},
		{"batch", oteltrace.WithoutFlush()},
		{"every=100ms", oteltrace.WithFlushEvery(100 * time.Millisecond)},
	}
	for _, p := range policies {
		b.Run(p.name, func(b *testing.B) {
			exp := &slowExporter{}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
			h := oteltrace.Wrap(echoFn, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup), p.opt)
			api := serve(b, h, n)
			payload := wantEcho(7)
			th, _, _ := header(7) // sampled: the fake's own headers are not
			var left, waited atomic.Int64
			left.Store(int64(b.N))
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						t0 := time.Now()
						res, err := api.Invoke(context.Background(), rapitest.Request{Payload: payload, TraceID: th})
						waited.Add(int64(time.Since(t0)))
						if err != nil || res.Err != nil {
							b.Errorf("Invoke: %v %v", err, res.Err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err := h.Shutdown(context.Background()); err != nil {
				b.Error(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inv/s")
			b.ReportMetric(float64(exp.exports.Load())/float64(b.N), "exports/inv")
			b.ReportMetric(float64(waited.Load())/float64(b.N)/1e6, "ms-latency/inv")
			if got := exp.spans.Load(); got != int64(b.N) {
				b.Errorf("%d spans exported, want %d", got, b.N)
			}
		})
	}
}
