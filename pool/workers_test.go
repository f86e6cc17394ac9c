package pool

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// wait is the upper bound of every wait in these tests; none is expected
// to come near it.
const wait = 10 * time.Second

// highWater counts tasks inside fn and remembers the most seen at once.
type highWater struct {
	cur, max atomic.Int64
}

func (h *highWater) enter() {
	n := h.cur.Add(1)
	for {
		m := h.max.Load()
		if n <= m || h.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (h *highWater) leave() { h.cur.Add(-1) }

func recvWithin[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func TestNewWorkersInvalid(t *testing.T) {
	fn := func(int) {}
	tests := []struct {
		name string
		size int
		fn   func(int)
		opts []Option
	}{
		{"zero size", 0, fn, nil},
		{"negative size", -3, fn, nil},
		{"size too large", 1 << 30, fn, nil},
		{"nil function", 1, nil, nil},
		{"done hook of another type", 1, fn, []Option{WithDone(func(string) {})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewWorkers(tt.size, tt.fn, tt.opts...)
			if !errors.Is(err, errInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if w != nil {
				t.Fatal("got a pool with an error")
			}
		})
	}
}

// TestWorkersBound fills the pool with blocked tasks: exactly size start,
// the next Invokes get ErrFull, and no more than size ever run at once.
func TestWorkersBound(t *testing.T) {
	tests := []struct {
		name  string
		size  int
		extra int
	}{
		{"one", 1, 3},
		{"four", 4, 4},
		{"sixty-four", 64, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hw highWater
			gate := make(chan struct{})
			started := make(chan struct{}, tt.size+tt.extra)
			w, err := NewWorkers(tt.size, func(int) {
				hw.enter()
				defer hw.leave()
				started <- struct{}{}
				<-gate
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.size {
				if err := w.Invoke(i); err != nil {
					t.Fatalf("Invoke %d: %v", i, err)
				}
			}
			for range tt.size {
				recvWithin(t, started, "tasks to start")
			}
			for i := range tt.extra {
				if err := w.Invoke(i); !errors.Is(err, errFull) {
					t.Fatalf("Invoke beyond size: err = %v, want ErrFull", err)
				}
			}
			if got := hw.max.Load(); got != int64(tt.size) {
				t.Fatalf("high-water = %d, want %d", got, tt.size)
			}
			close(gate)
			if err := w.Release(wait); err != nil {
				t.Fatal(err)
			}
			if got := hw.max.Load(); got != int64(tt.size) {
				t.Fatalf("high-water after release = %d, want %d", got, tt.size)
			}
			if len(started) != 0 {
				t.Fatalf("%d refused tasks ran", len(started))
			}
		})
	}
}

// TestWorkersSlots is the runtime's use: a slot is reserved before Invoke
// and freed from the WithDone hook. Such a caller never sees ErrFull, and
// the pool never runs more than size tasks at once.
func TestWorkersSlots(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		producers int
		tasks     int
	}{
		{"one slot", 1, 1, 2000},
		{"eight slots, one producer", 8, 1, 5000},
		{"eight slots, eight producers", 8, 8, 5000},
		{"many slots", 100, 16, 5000},
		{"256 slots, one producer", 256, 1, 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hw highWater
			var ran atomic.Int64
			slots := make(chan struct{}, tt.size)
			for range tt.size {
				slots <- struct{}{}
			}
			w, err := NewWorkers(tt.size, func(n int) {
				hw.enter()
				defer hw.leave()
				ran.Add(1)
				if n%7 == 0 {
					panic("every seventh task panics")
				}
			},
				WithDone(func(int) { slots <- struct{}{} }),
				withPanicHandler(func(any) {}),
			)
			if err != nil {
				t.Fatal(err)
			}
			var full atomic.Int64
			var wg sync.WaitGroup
			per := tt.tasks / tt.producers
			for p := range tt.producers {
				wg.Go(func() {
					for i := range per {
						select {
						case <-slots:
						case <-time.After(wait):
							t.Error("timed out waiting for a slot")
							return
						}
						if err := w.Invoke(p*per + i); err != nil {
							full.Add(1)
							slots <- struct{}{}
						}
					}
				})
			}
			wg.Wait()
			if err := w.Release(wait); err != nil {
				t.Fatal(err)
			}
			if n := full.Load(); n != 0 {
				t.Fatalf("%d Invokes refused while holding a slot", n)
			}
			if got, want := ran.Load(), int64(per*tt.producers); got != want {
				t.Fatalf("ran %d tasks, want %d", got, want)
			}
			if got := hw.max.Load(); got > int64(tt.size) {
				t.Fatalf("high-water = %d, want <= %d", got, tt.size)
			}
			if len(slots) != tt.size {
				t.Fatalf("%d slots back, want %d", len(slots), tt.size)
			}
		})
	}
}

func TestWorkersRelease(t *testing.T) {
	tests := []struct {
		name    string
		running bool
		first   time.Duration
		wantErr error // of the first Release, made while a task may be blocked
	}{
		{"idle", false, time.Second, nil},
		{"idle, zero timeout", false, 0, nil},
		{"running, short timeout", true, 20 * time.Millisecond, errTimeout},
		{"running, zero timeout", true, 0, errTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var finished atomic.Bool
			unblock := make(chan struct{})
			started := make(chan struct{}, 1)
			w, err := NewWorkers(2, func(struct{}) {
				started <- struct{}{}
				<-unblock
				finished.Store(true)
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.running {
				if err := w.Invoke(struct{}{}); err != nil {
					t.Fatal(err)
				}
				recvWithin(t, started, "the task to start")
			}
			err = w.Release(tt.first)
			if tt.wantErr == nil && tt.first == 0 && err != nil {
				// An idle pool's goroutines may still be on their way out.
				err = w.Release(wait)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("first Release = %v, want %v", err, tt.wantErr)
			}
			if tt.running && finished.Load() {
				t.Fatal("blocked task finished before it was unblocked")
			}
			if err := w.Invoke(struct{}{}); !errors.Is(err, errClosed) {
				t.Fatalf("Invoke after Release = %v, want ErrClosed", err)
			}
			close(unblock)
			// Release waits for the running task, and again on every call.
			for i := range 2 {
				if err := w.Release(wait); err != nil {
					t.Fatalf("Release #%d = %v", i+2, err)
				}
			}
			if tt.running && !finished.Load() {
				t.Fatal("Release returned before the task finished")
			}
		})
	}
}

// A pool that is never used leaves no goroutine behind, released or not:
// a runtime built and dropped without running (concurrent.New without Run)
// must not leak one per call.
func TestWorkersUnusedStartsNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for range 3 {
		if _, err := NewWorkers(4, func(int) {}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := NewWorkers(4, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Release(0); err != nil {
		t.Fatalf("Release of an unused pool = %v, want nil at once", err)
	}
	if err := w.Invoke(1); !errors.Is(err, errClosed) {
		t.Fatalf("Invoke after Release = %v, want ErrClosed", err)
	}
}

// Invoke racing Release on a pool not started yet either starts it before
// Release, which then stops it, or is refused: nothing is left running.
func TestWorkersStartRacesRelease(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for range 50 {
		var ran atomic.Int64
		w, err := NewWorkers(4, func(int) { ran.Add(1) })
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var ok atomic.Int64
		for i := range 4 {
			wg.Go(func() {
				if w.Invoke(i) == nil {
					ok.Add(1)
				}
			})
		}
		if err := w.Release(wait); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if err := w.Release(wait); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != ok.Load() {
			t.Fatalf("%d tasks ran, %d admitted", ran.Load(), ok.Load())
		}
	}
}

// notifyWriter is a stderr stand-in that says when it has been written to.
type notifyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (n *notifyWriter) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.buf.Write(p)
	select {
	case n.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (n *notifyWriter) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.buf.String()
}

func TestWorkersPanic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		handler    func(report chan<- any) func(any)
		wantReport bool
		wantStderr []string
	}{
		{
			name:       "handler",
			handler:    func(report chan<- any) func(any) { return func(v any) { report <- v } },
			wantReport: true,
		},
		{
			name:       "no handler",
			wantStderr: []string{"pool: task panicked: boom", "TestWorkersPanic"},
		},
		{
			name: "handler panics",
			handler: func(report chan<- any) func(any) {
				return func(v any) { report <- v; panic("handler broke") }
			},
			wantReport: true,
			wantStderr: []string{"pool: panic handler panicked: handler broke (task panic: boom)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := &notifyWriter{wrote: make(chan struct{}, 1)}

			report := make(chan any, 1)
			done := make(chan bool, 4)
			opts := []Option{WithDone(func(p bool) { done <- p })}
			if tt.handler != nil {
				opts = append(opts, withPanicHandler(tt.handler(report)))
			}
			w, err := NewWorkers(1, func(p bool) {
				if p {
					panic("boom")
				}
			}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			w.stderr = out
			defer func() {
				if err := w.Release(wait); err != nil {
					t.Error(err)
				}
			}()
			if err := w.Invoke(true); err != nil {
				t.Fatal(err)
			}
			if !recvWithin(t, done, "done hook after panic") {
				t.Fatal("done hook got the wrong argument")
			}
			if tt.wantReport {
				if v := recvWithin(t, report, "panic report"); v != "boom" {
					t.Fatalf("reported %v, want boom", v)
				}
			}
			if len(tt.wantStderr) > 0 {
				recvWithin(t, out.wrote, "stderr")
				for _, want := range tt.wantStderr {
					if !strings.Contains(out.String(), want) {
						t.Fatalf("stderr %q lacks %q", out.String(), want)
					}
				}
			}
			// The panic cost one task, not the pool: once the done hook has
			// run the slot is free, even while the panicked goroutine exits.
			if err := w.Invoke(false); err != nil {
				t.Fatalf("Invoke after panic: %v", err)
			}
			if recvWithin(t, done, "done hook") {
				t.Fatal("done hook got the wrong argument")
			}
			if len(tt.wantStderr) == 0 && out.String() != "" {
				t.Fatalf("unexpected stderr: %q", out.String())
			}
		})
	}
}
