package lambdatest

import (
	"sync"
	"sync/atomic"

	"github.com/lmigo/lmigo/concurrent/internal/leftover"
)

// Goroutines that outlive their invocation (Result.Leftover). The runtime
// takes an invocation's profiler labels off its slot's goroutine once the
// handler and its work are done, before it posts the answer. So once
// Invoke has the answer, a goroutine that still carries the labels was
// started by the handler and outlived it. Invoke counts them in the first
// goroutine profile begun after the answer came: no wait, no guess of
// time. A goroutine that ends at about that moment is counted or not as it
// happens; one that waits for anything is counted. Invocations served at
// once share a profile, which takes about a millisecond with a hundred
// goroutines (ten under -race).

// scans hands out goroutine profiles, one at a time: a caller may take
// one that began after it asked.
var scans struct {
	asked atomic.Uint64 // tickets: one per request, one per profile begun
	mu    sync.Mutex
	began uint64 // the ticket of the last profile's start
	last  map[string]*leftover.Count
	err   error
}

// leftovers counts the goroutines that carry the labels of invocation id
// in a profile begun after the call: those it left running (0 while its
// slot still serves it, after a timeout), and those GoDetached started.
func leftovers(id string) (left, detached int, err error) {
	ticket := scans.asked.Add(1)
	scans.mu.Lock()
	defer scans.mu.Unlock()
	if scans.began < ticket {
		scans.began = scans.asked.Add(1)
		scans.last, scans.err = leftover.Scan()
	}
	c := scans.last[id]
	switch {
	case scans.err != nil || c == nil:
		return 0, 0, scans.err
	case c.Slot > 0:
		return 0, c.Detached, nil
	}
	return c.Leftover + c.Unsure, c.Detached, nil
}
