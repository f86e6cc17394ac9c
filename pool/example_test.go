package pool_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/pool"
)

// The runtime's hand-off: reserve a slot, Invoke, free the slot in the
// done hook. A caller that does this never sees ErrFull.
func ExampleWorkers() {
	const size = 4
	slots := make(chan struct{}, size)
	for range size {
		slots <- struct{}{}
	}
	var sum atomic.Int64
	w, err := pool.NewWorkers(size, func(n int) { sum.Add(int64(n * n)) },
		pool.WithDone(func(int) { slots <- struct{}{} }))
	if err != nil {
		panic(err)
	}
	for n := 1; n <= 10; n++ {
		<-slots
		if err := w.Invoke(n); err != nil {
			panic(err)
		}
	}
	// Release waits for the tasks still running.
	if err := w.Release(time.Second); err != nil {
		panic(err)
	}
	fmt.Println("sum of squares:", sum.Load())
	fmt.Println("after release:", w.Invoke(11))
	// Output:
	// sum of squares: 385
	// after release: pool: workers released
}

// A worker keeps its request and response buffers between invocations,
// but never more bytes than its retain cap.
func ExampleBuffers() {
	bufs := pool.NewBuffers(1 << 20)

	resp := bufs.Get()
	resp.WriteString(strings.Repeat("x", 6<<20)) // a 6 MiB response
	bufs.Put(resp)                               // resp must not be used after this
	fmt.Println("kept after 6 MiB:", bufs.Retained())

	resp = bufs.Get()
	resp.WriteString(`{"ok":true}`)
	bufs.Put(resp)
	fmt.Println("kept after a small one:", bufs.Retained() > 0 && bufs.Retained() <= 1<<20)
	// Output:
	// kept after 6 MiB: 0
	// kept after a small one: true
}
