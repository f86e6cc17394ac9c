package concurrent

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"github.com/lmigo/lmigo/concurrent/metrics"
	"go.uber.org/zap"
)

// BenchmarkInvocationMetrics: what one invocation's metrics cost, from its
// context to its documents written (to io.Discard): none recorded, and a
// dimension, a metadata field and three metrics.
func BenchmarkInvocationMetrics(b *testing.B) {
	rt := &Runtime{emf: &emf.Env{Namespace: "Shop", Service: "orders", Out: io.Discard, Limit: maxLogLine}}
	rt.emf.TakeColdStart()
	base := context.WithValue(context.Background(), emf.EnvKey{}, rt.emf)
	log := zap.NewNop()
	deadline := time.Now().Add(time.Hour)
	lc := &lambdacontext.LambdaContext{AwsRequestID: "8476a536-e9f4-11e8-9739-2dfe598c3fcd"}
	for _, record := range []bool{false, true} {
		name := "none"
		if record {
			name = "recorded"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := newInvocation(base, deadline, lc, "", log)
				if record {
					_ = metrics.AddDimension(c, "Operation", "checkout")
					_ = metrics.AddMetadata(c, "orderId", "o-1234")
					_ = metrics.Add(c, "Orders", metrics.Count, 1)
					_ = metrics.Add(c, "Amount", metrics.None, 42.5)
					_ = metrics.AddHighResolution(c, "Latency", metrics.Milliseconds, 3.25)
				}
				if err := rt.finish(c, nil); err != nil {
					b.Fatal(err)
				}
				c.cancel()
			}
		})
	}
}
