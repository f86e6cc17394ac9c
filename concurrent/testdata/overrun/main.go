// Command overrun is a bootstrap whose handler ignores its deadline on
// demand, for the emulator tests of handlers that overrun: {"block":true}
// logs its deadline and blocks until an invocation {"release":true}
// comes; any other event is answered at once.
package main

import (
	"context"
	"sync"

	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

type event struct {
	Block   bool `json:"block"`
	Release bool `json:"release"`
}

func main() {
	released := make(chan struct{})
	var release sync.Once
	concurrent.Start(func(ctx context.Context, ev event) (string, error) {
		switch {
		case ev.Release:
			release.Do(func() { close(released) })
			return "released", nil
		case ev.Block:
			d, _ := ctx.Deadline()
			concurrent.Logger(ctx).Info("blocked", zap.Int64("deadlineMs", d.UnixMilli()))
			<-released // the context's end is ignored on purpose
			return "unblocked", nil
		}
		return "ok", nil
	})
}
