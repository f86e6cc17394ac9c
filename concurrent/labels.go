package concurrent

import (
	"context"
	"runtime/pprof"

	"github.com/lmigo/lmigo/concurrent/internal/leftover"
	"github.com/lmigo/lmigo/rapi"
)

// Profiler labels. Each invocation runs under the runtime/pprof labels
// requestId and function (AWS_LAMBDA_FUNCTION_NAME). The slot sets them
// as it hands the invocation to its handler (label), and takes them off
// once the handler and its work are done, before the answer is posted
// (unlabel, from finishWork). Goroutines the handler starts inherit them,
// so a CPU or goroutine profile splits by invocation, and one that still
// carries them later outlived its invocation (leftover.go). The
// invocation's context carries them as well, for pprof.Label and pprof.Do.
// LMIGO_LABELS=off sets none. They cost three allocations per invocation
// (BenchmarkInvocation, labels=on).

// parentCtx is the parent of inv's context: the runtime's base context,
// under inv's labels unless they are off.
func (rt *Runtime) parentCtx(inv *rapi.Invocation) context.Context {
	if !rt.cfg.Labels {
		return rt.baseCtx
	}
	return pprof.WithLabels(rt.baseCtx,
		pprof.Labels(leftover.KeyFunction, rt.cfg.FunctionName, leftover.KeyRequestID, inv.RequestID))
}

// label puts the slot's goroutine under the labels of ctx, its
// invocation's.
func (s *slot) label(ctx context.Context) {
	if s.rt.cfg.Labels {
		pprof.SetGoroutineLabels(ctx)
		s.labeled = true
	}
}

// unlabel puts the slot's goroutine back under the base context's labels.
func (s *slot) unlabel() {
	if s.labeled {
		s.labeled = false
		pprof.SetGoroutineLabels(s.rt.baseCtx)
	}
}

// detach returns ctx with its labels, if it has an invocation's, marked
// as those of work meant to outlive it (GoDetached), and whether it did.
func detach(ctx context.Context) (context.Context, bool) {
	if _, ok := pprof.Label(ctx, leftover.KeyRequestID); !ok {
		return ctx, false
	}
	return pprof.WithLabels(ctx, pprof.Labels(leftover.KeyDetached, "true")), true
}
