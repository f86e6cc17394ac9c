package pool

import (
	"fmt"
	"testing"

	"github.com/valyala/bytebufferpool"
)

func BenchmarkBuffers(b *testing.B) {
	for _, n := range []int{1 << 10, 64 << 10} {
		payload := make([]byte, n)
		b.Run(fmt.Sprintf("Buffers/%dKiB", n>>10), func(b *testing.B) {
			b.ReportAllocs()
			bufs := NewBuffers(1 << 20)
			for range b.N {
				buf := bufs.Get()
				buf.Write(payload)
				bufs.Put(buf)
			}
		})
		b.Run(fmt.Sprintf("bytebufferpool/%dKiB", n>>10), func(b *testing.B) {
			b.ReportAllocs()
			var p bytebufferpool.Pool
			for range b.N {
				buf := p.Get()
				buf.Write(payload)
				p.Put(buf)
			}
		})
		b.Run(fmt.Sprintf("new/%dKiB", n>>10), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				buf := new(bytebufferpool.ByteBuffer)
				buf.Write(payload)
			}
		})
	}
}
