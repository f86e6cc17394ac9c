package pool

import (
	"fmt"
	"testing"

	"github.com/panjf2000/ants/v2"
	"github.com/valyala/bytebufferpool"
)

type benchTask struct{ sum int }

// work is the stand-in for a handler; small, so hand-off cost dominates.
func (t *benchTask) work() {
	for i := range 64 {
		t.sum += i
	}
}

// Each benchmark hands b.N tasks to size workers the way the runtime does:
// take a free slot, start the task, the task frees the slot when it ends.
func newSlots(size int) chan *benchTask {
	slots := make(chan *benchTask, size)
	for range size {
		slots <- new(benchTask)
	}
	return slots
}

func drain(slots chan *benchTask, size int) {
	for range size {
		<-slots
	}
}

func withPreAlloc(v bool) Option { return func(o *options) { o.preAlloc = v } }

var benchSizes = []int{1, 16, 256}

func BenchmarkInvoke(b *testing.B) {
	for _, size := range benchSizes {
		for _, pre := range []bool{false, true} {
			b.Run(fmt.Sprintf("Workers/prealloc=%v/size=%d", pre, size), func(b *testing.B) {
				b.ReportAllocs()
				slots := newSlots(size)
				w, err := NewWorkers(size, (*benchTask).work,
					WithDone(func(t *benchTask) { slots <- t }), withPreAlloc(pre))
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if err := w.Invoke(<-slots); err != nil {
						b.Fatal(err)
					}
				}
				drain(slots, size)
				b.StopTimer()
				b.ReportMetric(float64(w.yields.Load())/float64(b.N), "yields/op")
				if err := w.Release(wait); err != nil {
					b.Fatal(err)
				}
			})
		}
		b.Run(fmt.Sprintf("go/size=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			slots := newSlots(size)
			for range b.N {
				t := <-slots
				go func() {
					t.work()
					slots <- t
				}()
			}
			drain(slots, size)
		})
		b.Run(fmt.Sprintf("antsSubmit/size=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			slots := newSlots(size)
			// Blocking mode: ants' own pool alone cannot promise a free
			// worker to a caller whose slot was freed inside the task.
			p, err := ants.NewPool(size, ants.WithDisablePurge(true))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				t := <-slots
				if err := p.Submit(func() {
					t.work()
					slots <- t
				}); err != nil {
					b.Fatal(err)
				}
			}
			drain(slots, size)
			b.StopTimer()
			if err := p.ReleaseTimeout(wait); err != nil {
				b.Fatal(err)
			}
		})
	}
}

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
