package rapitest

import (
	"context"
	"testing"
)

// BenchmarkInvoke measures a full round trip: Invoke, /next, /response,
// with the net/http test runtime on the other side.
func BenchmarkInvoke(b *testing.B) {
	const n = 8
	s := newServer(b, Options{MaxConcurrency: n, Queue: true})
	rt := newTestRuntime(b, s)
	wait := rt.serve(context.Background(), n, 1<<30, rt.echo)
	payload := []byte(`{"hello":"world"}`)
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Invoke(context.Background(), Request{Payload: payload}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	s.Close()
	wait()
}

// BenchmarkFormatID is the cost of one request ID.
func BenchmarkFormatID(b *testing.B) {
	g := newIDs()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = formatID(g.request, uint64(i))
	}
}
