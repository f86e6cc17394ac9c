package concurrent

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap/zaptest/observer"
)

// overrunEvent drives overrunHandler.
type overrunEvent struct {
	Hang    bool `json:"hang"`    // ignore the deadline: block until the test releases the hung handlers
	Barrier bool `json:"barrier"` // block until the barrier is full
}

// overrunHandler answers at once, or hangs until hung is closed (never by
// time), or waits at a barrier of n handlers, to prove n slots serve at once.
type overrunHandler struct {
	hung    chan struct{}
	hanging atomic.Int64
	barrier *barrier
	abort   chan struct{} // opens the barrier when the test fails
}

func newOverrunHandler(n int) *overrunHandler {
	return &overrunHandler{hung: make(chan struct{}), barrier: &barrier{n: n, all: make(chan struct{})}, abort: make(chan struct{})}
}

func (h *overrunHandler) handle(_ context.Context, ev overrunEvent) (string, error) {
	switch {
	case ev.Hang:
		h.hanging.Add(1)
		defer h.hanging.Add(-1)
		<-h.hung
		return "late", nil
	case ev.Barrier:
		h.barrier.arrive()
		select {
		case <-h.barrier.all:
		case <-h.abort:
		}
		return "together", nil
	}
	return "ok", nil
}

// TestOverrunReplacesSlot: at N=8, with 1..8 handlers that ignore their
// deadline and a steady load beside them, every slot whose handler overran
// is replaced once its deadline is past by the grace: the environment
// serves at full N again (8 invocations at once, at a barrier), polls plus
// the invocations the fake still holds never exceed N, nothing is lost,
// and when the hung handlers return at last their late answers get 410,
// are logged with their request IDs, and their goroutines leave the pool.
func TestOverrunReplacesSlot(t *testing.T) {
	const (
		n       = 8
		grace   = 100 * time.Millisecond
		timeout = 200 * time.Millisecond // the hung invocations' deadline
	)
	for hung := 1; hung <= n; hung++ {
		t.Run(fmt.Sprintf("%d hung", hung), func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
			log, logs := observe()
			h := newOverrunHandler(n)
			rt, err := New(h.handle, WithLogger(log), WithLookupEnv(api.Env(map[string]string{
				"LMIGO_OVERRUN_GRACE": grace.String(),
				"LMIGO_WEDGED_EXIT":   "off",
			})))
			if err != nil {
				t.Fatal(err)
			}
			stop, wait := runStoppable(t, api, rt, n)
			ctx, cancel := testContext(t)
			defer cancel()
			released := false
			release := func() {
				if !released {
					released = true
					close(h.hung)
				}
			}
			defer release()

			// A steady load, all through.
			var shorts atomic.Int64
			loadCtx, stopLoad := context.WithCancel(ctx)
			var load sync.WaitGroup
			for range 2 {
				load.Go(func() {
					for loadCtx.Err() == nil {
						r, err := api.Invoke(loadCtx, rapitest.Request{Payload: []byte(`{}`), Timeout: time.Hour})
						if err != nil {
							return // stopped
						}
						if r.Err != nil || string(r.Body) != `"ok"` {
							t.Errorf("short invocation: %s %+v", r.Body, r.Err)
							return
						}
						shorts.Add(1)
					}
				})
			}

			var timedOut sync.WaitGroup
			for range hung {
				timedOut.Go(func() {
					r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"hang":true}`), Timeout: timeout})
					if err != nil || r.Err == nil || r.Err.Type != rapitest.ErrorTypeTimeout {
						t.Errorf("hung invocation: %+v, %v; want a timeout", r, err)
					}
				})
			}
			timedOut.Wait()
			waitUntil(t, "the hung handlers", func() bool { return h.hanging.Load() == int64(hung) })

			// Full N serving again while the handlers still hang: n
			// invocations at once, within a bound far beyond the grace.
			defer close(h.abort)
			bctx, bcancel := context.WithTimeout(ctx, 30*time.Second)
			defer bcancel()
			var together sync.WaitGroup
			for range n {
				together.Go(func() {
					r, err := api.Invoke(bctx, rapitest.Request{Payload: []byte(`{"barrier":true}`), Timeout: time.Hour})
					if err != nil || r.Err != nil || string(r.Body) != `"together"` {
						t.Errorf("barrier invocation: %s %+v, %v", r.Body, r.Err, err)
					}
				})
			}
			together.Wait()
			if t.Failed() {
				t.Fatalf("not %d invocations at once with %d handlers hung: stats %+v", n, hung, api.Stats())
			}
			for _, e := range logs.FilterMessage(msgOverrun).All() {
				if past, _ := e.ContextMap()["pastDeadline"].(time.Duration); past < grace {
					t.Errorf("replaced %v past the deadline, before the grace %v: %v", past, grace, e.ContextMap())
				}
			}
			if got := logs.FilterMessage(msgOverrun).Len(); got != hung {
				t.Errorf("%d overrun warnings, want %d", got, hung)
			}

			release()
			waitUntil(t, "the late answers", func() bool { return api.Stats().Late == int64(hung) })
			waitUntil(t, "the hung slots released", func() bool { return rt.overrunning() == 0 })
			stopLoad()
			load.Wait()
			stop()
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			st := api.Stats()
			if st.Violations != 0 || st.MaxOutstanding > n || st.Duplicates != 0 ||
				st.Timeouts != int64(hung) || st.Answered() != shorts.Load()+n || st.Late != int64(hung) {
				t.Fatalf("stats %+v, %d short invocations", st, shorts.Load())
			}
			checkLateAnswersLogged(t, logs, hung)
		})
	}
}

// checkLateAnswersLogged: each late answer of a handler that overran is
// logged with its request ID.
func checkLateAnswersLogged(t *testing.T, logs *observer.ObservedLogs, hung int) {
	t.Helper()
	ids := map[string]bool{}
	for _, e := range logs.FilterMessage(msgOverrun).All() {
		ids[e.ContextMap()[keyRequestID].(string)] = true
	}
	late := logs.FilterMessage(msgOverrunReturned).All()
	if len(late) != hung || len(ids) != hung {
		t.Fatalf("%d late answers logged for %d overruns, want %d", len(late), len(ids), hung)
	}
	for _, e := range late {
		if id, _ := e.ContextMap()[keyRequestID].(string); !ids[id] {
			t.Errorf("late answer logged for %q, which did not overrun: %v", id, e.ContextMap())
		}
	}
}
