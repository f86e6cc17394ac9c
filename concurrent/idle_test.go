package concurrent

import (
	"runtime/debug"
	"sync"
	"testing"
)

// growAndPark starts n goroutines that each grow their stack to about
// kib KiB, then park until release is closed; it returns once all are
// parked.
func growAndPark(n, kib int, release <-chan struct{}, wg *sync.WaitGroup) {
	var parked sync.WaitGroup
	parked.Add(n)
	for range n {
		wg.Go(func() {
			deepen(kib)
			parked.Done()
			<-release
		})
	}
	parked.Wait()
}

// deepen recurses through kib frames of about 1 KiB each.
//
//go:noinline
func deepen(kib int) byte {
	var pad [1000]byte
	pad[kib%len(pad)] = byte(kib)
	if kib <= 1 {
		return pad[0]
	}
	return deepen(kib-1) + pad[kib%len(pad)]
}

// TestFreeIdleShrinksStacks: the idle free gives back the stacks a burst
// grew. 1,000 parked goroutines whose stacks grew to 32 KiB (a deep
// handler on each slot's goroutine) keep 32 MiB of stack; one GC halves a
// stack at most, so a single debug.FreeOSMemory leaves half of it. freeIdle
// goes on until the stacks stop shrinking.
func TestFreeIdleShrinksStacks(t *testing.T) {
	const n, kib = 1000, 17 // 17 KiB of frames: a 32 KiB stack
	release := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(release); wg.Wait() }()
	debug.FreeOSMemory()
	base := stackBytes()
	growAndPark(n, kib, release, &wg)
	grown := stackBytes() - base
	if grown < n*16<<10 {
		t.Fatalf("the stacks grew by %d KiB, want at least %d KiB", grown>>10, n*16)
	}
	freeIdle()
	left := stackBytes() - base
	t.Logf("stacks: %d KiB grown, %d KiB left after the idle free", grown>>10, left>>10)
	if left > grown/4 {
		t.Fatalf("the idle free left %d KiB of %d KiB of grown stacks, want at most a quarter", left>>10, grown>>10)
	}
}
