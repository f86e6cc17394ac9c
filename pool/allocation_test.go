//go:build !race

package pool

import (
	"testing"
)

func TestAllocsBuffers(t *testing.T) {
	payload := make([]byte, 8<<10)
	b := NewBuffers(1 << 20)
	cycle := func() {
		req, resp := b.Get(), b.Get()
		req.Write(payload)
		resp.Write(payload[:100])
		b.Put(req)
		b.Put(resp)
		_ = b.Retained()
	}
	cycle() // first use grows the two buffers
	if n := testing.AllocsPerRun(1000, cycle); n != 0 {
		t.Fatalf("Get/Put allocates %v per cycle, want 0", n)
	}
}
