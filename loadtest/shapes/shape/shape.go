// Package shape serves functions of a known shape, for the load test's
// size command to be checked against: so much CPU, so much waiting and so
// much memory held per invocation. Their recommendations must agree with
// what the shape implies (loadtest/README.md, "Sizing your function").
package shape

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lmigo/lmigo/concurrent"
)

// Shape is what one invocation costs.
type Shape struct {
	CPU  time.Duration // CPU time burnt, not wall time: a busy machine does not shrink it
	Wait time.Duration // then a wait, as on a downstream call
	Hold int           // bytes held in memory from the start of the invocation to its end
}

// Start serves s with lmigo; it does not return.
func Start(s Shape) {
	perMS := calibrate()
	// Held buffers are kept for the next invocation, touched once: the
	// memory held is the shape's, not the garbage collector's slack, and
	// touching pages costs no CPU after the first use.
	var mu sync.Mutex
	var free [][]byte
	concurrent.Start(func(ctx context.Context, ev json.RawMessage) (map[string]bool, error) {
		var buf []byte
		if s.Hold > 0 {
			mu.Lock()
			if n := len(free); n > 0 {
				buf, free = free[n-1], free[:n-1]
			}
			mu.Unlock()
			if buf == nil {
				buf = make([]byte, s.Hold)
				for i := 0; i < len(buf); i += 4096 {
					buf[i] = 1
				}
			}
		}
		spin(perMS * float64(s.CPU) / float64(time.Millisecond))
		if s.Wait > 0 {
			t := time.NewTimer(s.Wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		if buf != nil {
			buf[len(buf)-1]++
			mu.Lock()
			free = append(free, buf)
			mu.Unlock()
		}
		return map[string]bool{"done": true}, nil
	})
}

// spin does n units of work.
func spin(n float64) {
	x := uint64(1)
	for i := 0; i < int(n); i++ {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	runtime.KeepAlive(x)
}

// calibrate is the units of spin per millisecond of CPU, read on this
// thread's CPU clock so that time the thread is not running does not count.
func calibrate() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := 0.0
	for range 5 {
		t0 := threadCPU()
		const n = 2000
		spin(n)
		if d := threadCPU() - t0; d > 0 {
			best = max(best, n/(float64(d)/float64(time.Millisecond)))
		}
	}
	return max(best, 1)
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
