package concurrent

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
)

// TestFreeMemoryShrinksStacks: the idle free takes parked goroutines that
// grew 32 KiB stacks down to the floor that GCs reach (4 KiB, 8 KiB
// under -race, whose frames are larger), which takes three GCs, not the
// one of debug.FreeOSMemory. The floor is read, not assumed: more GCs
// after the free shrink nothing more.
func TestFreeMemoryShrinksStacks(t *testing.T) {
	const n = 256
	stackInuse := func() int64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.StackInuse)
	}
	var grown sync.WaitGroup
	park := make(chan struct{})
	defer close(park)
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
	freed := stackInuse()
	for range 3 {
		runtime.GC()
	}
	floor := stackInuse()
	// A free that stopped one halving short leaves at least 4 KiB a
	// goroutine above the floor; allow a quarter of that for the stacks of
	// goroutines other tests left ending.
	if over := freed - floor; over > n<<10 {
		t.Errorf("after the free, %d goroutines parked after growing 32 KiB stacks hold %d KiB of stack above what 3 more GCs leave, want at most %d KiB",
			n, over>>10, n)
	}
}
