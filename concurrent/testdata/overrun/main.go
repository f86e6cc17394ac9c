// Command overrun is a bootstrap whose handler ignores its deadline on
// demand, for the emulator tests of handlers that overrun: {"block":true}
// blocks until an invocation {"release":true} comes, whatever its
// deadline; {"barrier":n} waits, within its deadline, until n invocations
// wait there, and answers "together" (n slots served at once) or "alone";
// any other event is answered at once.
package main

import (
	"context"
	"sync"

	"github.com/lmigo/lmigo/concurrent"
)

type event struct {
	Block   bool `json:"block"`
	Release bool `json:"release"`
	Barrier int  `json:"barrier"`
}

var (
	released = make(chan struct{})
	release  sync.Once

	mu      sync.Mutex
	waiting int
	full    = make(chan struct{})
)

func main() {
	concurrent.Start(func(ctx context.Context, ev event) (string, error) {
		switch {
		case ev.Release:
			release.Do(func() { close(released) })
			return "released", nil
		case ev.Block:
			<-released // the context's end is ignored on purpose
			return "unblocked", nil
		case ev.Barrier > 0:
			return barrier(ctx, ev.Barrier), nil
		}
		return "ok", nil
	})
}

// barrier waits until n invocations wait, or ctx ends; a full barrier
// opens a new one for the next round.
func barrier(ctx context.Context, n int) string {
	mu.Lock()
	ch := full
	waiting++
	if waiting == n {
		close(full)
		full, waiting = make(chan struct{}), 0
	}
	mu.Unlock()
	select {
	case <-ch:
		return "together"
	case <-ctx.Done():
		return "alone"
	}
}
