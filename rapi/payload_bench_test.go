package rapi

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkNextPayload: the request path's read, GET /next with a payload
// of each size on a warm Conn (and a small POST /response), against the
// loopback test server. The payload is read once, into the Invocation's
// own buffer, reused from one call to the next: no allocation of its size.
func BenchmarkNextPayload(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 20, 6 << 20} {
		payload := bytes.Repeat([]byte("p"), n)
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			srv := newTestServer(b, apiHandler(payload))
			cn := srv.client(b).Conn()
			defer cn.Close()
			queueOnly(cn)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var inv Invocation
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := cn.Next(ctx, &inv); err != nil {
					b.Fatal(err)
				}
				if len(inv.Payload) != n {
					b.Fatalf("payload of %d bytes", len(inv.Payload))
				}
				if err := cn.Respond(ctx, &inv, []byte(`1`), "application/json", queueOf(cn)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
