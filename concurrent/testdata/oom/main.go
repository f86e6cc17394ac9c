// Command oom is a bootstrap whose handler allocates until the process
// dies for memory: {"grow":true} keeps each MiB it allocates, its pages
// touched, and never returns; any other event is answered at once.
package main

import (
	"context"
	"sync"

	"github.com/lmigo/lmigo/concurrent"
)

var (
	mu   sync.Mutex
	kept [][]byte
)

func main() {
	concurrent.Start(func(_ context.Context, ev struct{ Grow bool }) (string, error) {
		for ev.Grow {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			mu.Lock()
			kept = append(kept, b)
			mu.Unlock()
		}
		return "ok", nil
	})
}
