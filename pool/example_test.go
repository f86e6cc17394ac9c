package pool_test

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lmigo/lmigo/pool"
)

// Long-lived tasks, as the runtime's slots: each is one loop on a
// goroutine of its own, until it is told to stop. A task that ends
// without returning (here runtime.Goexit would do, or a panic) starts
// again in its place.
func ExampleWorkers() {
	const size = 3
	jobs := make(chan int)
	var mu sync.Mutex
	sum := 0
	w, err := pool.NewWorkers(size, func(id int) {
		for n := range jobs {
			mu.Lock()
			sum += n * n
			mu.Unlock()
		}
	})
	if err != nil {
		panic(err)
	}
	for id := range size {
		if err := w.Invoke(id); err != nil {
			panic(err)
		}
	}
	fmt.Println("a fourth task:", w.Invoke(size) != nil)
	for n := 1; n <= 10; n++ {
		jobs <- n
	}
	close(jobs)
	// Release waits for the tasks to return.
	if err := w.Release(time.Second); err != nil {
		panic(err)
	}
	fmt.Println("sum of squares:", sum)
	fmt.Println("after release:", w.Invoke(0))
	// Output:
	// a fourth task: true
	// sum of squares: 385
	// after release: pool: released
}

// A slot keeps its request and response buffers between invocations, but
// never more bytes than its retain cap.
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
