package concurrent

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
)

// hangingBody streams a first chunk, then blocks until released: a
// streamed answer whose body hangs past the invocation's deadline.
type hangingBody struct {
	sent     bool
	released <-chan struct{}
	hanging  *atomic.Int64
}

func (b *hangingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "partial"), nil
	}
	b.hanging.Add(1)
	defer b.hanging.Add(-1)
	<-b.released
	return 0, io.EOF
}

// TestOverrunStreamReplacesSlot: a streamed answer whose body hangs past
// the deadline holds its slot's goroutine as a handler that never
// returns does: the slot is replaced once the deadline is past by the
// grace, and N invocations are served at once again while the body still
// hangs.
func TestOverrunStreamReplacesSlot(t *testing.T) {
	const (
		n       = 2
		grace   = 100 * time.Millisecond
		timeout = 200 * time.Millisecond
	)
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	released := make(chan struct{})
	var hanging atomic.Int64
	b := &barrier{n: n, all: make(chan struct{})}
	abort := make(chan struct{})
	rt, err := New(func(_ context.Context, ev struct{ Stream, Barrier bool }) (io.Reader, error) {
		switch {
		case ev.Stream:
			return &hangingBody{released: released, hanging: &hanging}, nil
		case ev.Barrier:
			b.arrive()
			select {
			case <-b.all:
			case <-abort:
			}
		}
		return nil, nil
	}, WithLookupEnv(api.Env(map[string]string{
		"LMIGO_OVERRUN_GRACE": grace.String(),
		"LMIGO_WEDGED_EXIT":   "off",
	})), WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, n)
	ctx, cancel := testContext(t)
	defer cancel()

	r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"Stream":true}`), Timeout: timeout})
	if err != nil || r.Err == nil {
		t.Fatalf("hung stream: %+v, %v; want it ended by its deadline", r, err)
	}
	waitUntil(t, "the hung body", func() bool { return hanging.Load() == 1 })

	bctx, bcancel := context.WithTimeout(ctx, 30*time.Second)
	defer bcancel()
	var together sync.WaitGroup
	for range n {
		together.Go(func() {
			r, err := api.Invoke(bctx, rapitest.Request{Payload: []byte(`{"Barrier":true}`), Timeout: time.Hour})
			if err != nil || r.Err != nil {
				t.Errorf("barrier invocation: %+v, %v", r, err)
			}
		})
	}
	together.Wait()
	close(abort)
	if t.Failed() {
		t.Fatalf("not %d invocations at once with a stream hung: stats %+v", n, api.Stats())
	}
	close(released)
	stop()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}
