package concurrent

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
)

// TestFreeMemoryShrinksStacks: the idle free takes parked goroutines that
// grew 32 KiB stacks back down to their floor, which takes three GCs,
// not the one of debug.FreeOSMemory.
func TestFreeMemoryShrinksStacks(t *testing.T) {
	const n = 256
	stackInuse := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.StackInuse
	}
	for range 3 { // whatever earlier tests left to shrink
		stackInuse()
	}
	base := stackInuse()
	var grown sync.WaitGroup
	park := make(chan struct{})
	for range n {
		grown.Add(1)
		go func() {
			_, _ = demo.Handle(context.Background(), demo.Event{StackKiB: 32})
			grown.Done()
			<-park
		}()
	}
	grown.Wait()
	freeMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	close(park)
	if over := int64(ms.StackInuse) - int64(base); over > n*8<<10 {
		t.Errorf("%d goroutines parked after growing 32 KiB stacks hold %d KiB of stack more than before, want at most %d KiB",
			n, over>>10, n*8)
	}
}
