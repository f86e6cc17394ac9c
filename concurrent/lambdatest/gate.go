package lambdatest

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/lmigo/lmigo/concurrent"
)

// gated serves a handler whose invocations, while a round is held, wait
// at their start until all of the round's have started: they then run at
// once, as a burst on a managed instance runs them, whatever the speed of
// the machine that hands them out.
type gated struct {
	h    concurrent.StreamInvoker
	gate atomic.Pointer[gate]
}

type gate struct {
	n, arrived atomic.Int64
	open       chan struct{}
}

// hold makes the next n invocations wait for each other; 0 lets them go.
func (g *gated) hold(n int) {
	if n == 0 {
		g.gate.Store(nil)
		return
	}
	gt := &gate{open: make(chan struct{})}
	gt.n.Store(int64(n))
	g.gate.Store(gt)
}

// wait returns when the round's invocations have all started, or ctx (the
// invocation's, with its deadline) is done.
func (g *gated) wait(ctx context.Context) {
	gt := g.gate.Load()
	if gt == nil {
		return
	}
	if gt.arrived.Add(1) == gt.n.Load() {
		close(gt.open)
	}
	select {
	case <-gt.open:
	case <-ctx.Done():
	}
}

func (g *gated) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	g.wait(ctx)
	return g.h.Invoke(ctx, payload)
}

func (g *gated) InvokeStream(ctx context.Context, payload []byte) (string, []byte, io.Reader, error) {
	g.wait(ctx)
	return g.h.InvokeStream(ctx, payload)
}
