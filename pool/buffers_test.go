package pool

import (
	"bytes"
	"sync"
	"testing"

	"github.com/valyala/bytebufferpool"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

func grown(n int) *bytebufferpool.ByteBuffer {
	buf := new(bytebufferpool.ByteBuffer)
	buf.B = make([]byte, n)
	return buf
}

func TestBuffersRetainCap(t *testing.T) {
	tests := []struct {
		name      string
		retainCap int
		puts      []int // capacities of the buffers put, in order
		wantKept  int   // buffers kept
		wantBytes int   // Retained after the puts
	}{
		{"6 MiB dropped under 1 MiB cap", mib, []int{6 * mib}, 0, 0},
		{"small kept, 6 MiB dropped", mib, []int{4 * kib, 6 * mib}, 1, 4 * kib},
		{"exactly the cap is kept", mib, []int{mib}, 1, mib},
		{"one byte over the cap dropped", mib, []int{mib + 1}, 0, 0},
		{"two fit", mib, []int{512 * kib, 512 * kib}, 2, mib},
		{"second would pass the total", mib, []int{600 * kib, 600 * kib}, 1, 600 * kib},
		{"request and response", mib, []int{16 * kib, 64 * kib}, 2, 80 * kib},
		{"count bounded", mib, []int{1, 1, 1, 1, 1, 1}, maxKept, maxKept},
		{"empty buffers count zero bytes", mib, []int{0, 0}, 2, 0},
		{"zero cap keeps only empty ones", 0, []int{0, 64}, 1, 0},
		{"negative cap is zero", -5, []int{64}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffers(tt.retainCap)
			for _, c := range tt.puts {
				b.Put(grown(c))
				if r := b.Retained(); r > max(tt.retainCap, 0) {
					t.Fatalf("Retained = %d, above the cap %d", r, tt.retainCap)
				}
			}
			if got := b.Retained(); got != tt.wantBytes {
				t.Fatalf("Retained = %d, want %d", got, tt.wantBytes)
			}
			if b.n != tt.wantKept {
				t.Fatalf("kept %d buffers, want %d", b.n, tt.wantKept)
			}
			seen := map[*bytebufferpool.ByteBuffer]bool{}
			total := 0
			for range len(tt.puts) + 1 {
				buf := b.Get()
				if buf.Len() != 0 {
					t.Fatalf("Get returned a buffer of length %d", buf.Len())
				}
				if cap(buf.B) > max(tt.retainCap, 0) {
					t.Fatalf("Get returned cap %d, above the cap", cap(buf.B))
				}
				if seen[buf] {
					t.Fatal("Get returned the same buffer twice")
				}
				seen[buf] = true
				total += cap(buf.B)
			}
			if total != tt.wantBytes {
				t.Fatalf("kept buffers hold %d bytes, want %d", total, tt.wantBytes)
			}
			if b.Retained() != 0 {
				t.Fatalf("Retained = %d after taking everything", b.Retained())
			}
		})
	}
}

// TestBuffersAfterLargeResponse is the case the cap exists for: a slot
// builds a 6 MiB response, puts it back, and keeps no more than the cap.
func TestBuffersAfterLargeResponse(t *testing.T) {
	b := NewBuffers(mib)
	req, resp := b.Get(), b.Get()
	req.WriteString(`{"size":"large"}`)
	resp.Write(bytes.Repeat([]byte{'x'}, 6*mib))
	b.Put(req)
	b.Put(resp)
	if r := b.Retained(); r > mib {
		t.Fatalf("Retained = %d after a 6 MiB response, want <= %d", r, mib)
	}
	for range 2 {
		if buf := b.Get(); cap(buf.B) > 64*kib {
			t.Fatalf("next Get returned cap %d, want a small buffer", cap(buf.B))
		}
	}
	if resp.B != nil {
		t.Fatal("dropped buffer still holds its array")
	}
}

func TestBuffersReuse(t *testing.T) {
	b := NewBuffers(mib)
	buf := b.Get()
	buf.WriteString("hello, worker")
	b.Put(buf)
	b.Put(buf) // a second Put must not give it to two owners
	b.Put(nil)
	got := b.Get()
	if got != buf {
		t.Fatal("Get did not return the kept buffer")
	}
	if got.Len() != 0 || cap(got.B) == 0 {
		t.Fatalf("kept buffer: len %d cap %d, want reset with capacity", got.Len(), cap(got.B))
	}
	if other := b.Get(); other == buf {
		t.Fatal("double Put handed the buffer out twice")
	}
}

func TestBuffersZeroValue(t *testing.T) {
	var b Buffers
	b.Put(grown(10))
	if b.Retained() != 0 {
		t.Fatal("zero Buffers kept a buffer with capacity")
	}
	if b.Get() == nil {
		t.Fatal("Get returned nil")
	}
}

func TestBuffersConcurrent(t *testing.T) {
	const retainCap = 64 * kib
	b := NewBuffers(retainCap)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				buf := b.Get()
				buf.Write(make([]byte, (g*997+i*131)%(40*kib)))
				b.Put(buf)
				if r := b.Retained(); r > retainCap {
					t.Errorf("Retained = %d above cap", r)
					return
				}
			}
		})
	}
	wg.Wait()
}
