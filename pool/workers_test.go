package pool

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
		{"size too large", math.MaxInt32, fn, nil},
		{"nil function", 1, nil, nil},
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

// TestWorkersRestart: a task that ends without returning (a panic,
// runtime.Goexit) is started again with the same argument, at once, while
// the other tasks run on: the pool stays full, and never runs more than
// size tasks at once.
func TestWorkersRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		end        func()
		handler    func(report chan<- any) func(any)
		wantReport bool
		wantStderr []string
	}{
		{
			name:       "panic, handler",
			end:        func() { panic("boom") },
			handler:    func(report chan<- any) func(any) { return func(v any) { report <- v } },
			wantReport: true,
		},
		{
			name:       "panic, no handler",
			end:        func() { panic("boom") },
			wantStderr: []string{"pool: task panicked: boom", "TestWorkersRestart"},
		},
		{
			name: "panic, handler panics",
			end:  func() { panic("boom") },
			handler: func(report chan<- any) func(any) {
				return func(v any) { report <- v; panic("handler broke") }
			},
			wantReport: true,
			wantStderr: []string{"pool: panic handler panicked: handler broke (task panic: boom)"},
		},
		{name: "goexit", end: runtime.Goexit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			const size, ends = 3, 5
			out := &notifyWriter{wrote: make(chan struct{}, 1)}
			report := make(chan any, ends)
			var opts []Option
			if tt.handler != nil {
				opts = append(opts, WithPanicHandler(tt.handler(report)))
			}
			var hw highWater
			var calls [size]atomic.Int64
			gate := make(chan struct{})
			started := make(chan int, size*(ends+1))
			w, err := NewWorkers(size, func(i int) {
				hw.enter()
				defer hw.leave()
				n := calls[i].Add(1)
				started <- i
				if i == 0 && n <= ends {
					tt.end()
				}
				<-gate
			}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			w.stderr = out
			for i := range size {
				if err := w.Invoke(i); err != nil {
					t.Fatal(err)
				}
			}
			for range size + ends {
				recvWithin(t, started, "tasks to start, and the ended one again")
			}
			if n := calls[0].Load(); n != ends+1 {
				t.Fatalf("the ending task ran %d times, want %d", n, ends+1)
			}
			if err := w.Invoke(size); !errors.Is(err, errFull) {
				t.Fatalf("Invoke with size tasks running: %v, want errFull", err)
			}
			if tt.wantReport {
				for range ends {
					if v := recvWithin(t, report, "panic report"); v != "boom" {
						t.Fatalf("reported %v, want boom", v)
					}
				}
			}
			close(gate)
			if err := w.Release(wait); err != nil {
				t.Fatal(err)
			}
			if got := hw.max.Load(); got > size {
				t.Fatalf("high-water = %d, want <= %d", got, size)
			}
			// ants reports a panic after the goroutine stopped counting.
			for _, want := range tt.wantStderr {
				for !strings.Contains(out.String(), want) {
					recvWithin(t, out.wrote, want+" on stderr")
				}
			}
			if len(tt.wantStderr) == 0 && out.String() != "" {
				t.Fatalf("unexpected stderr: %q", out.String())
			}
		})
	}
}

// TestWorkersRestartTogether: a task that ends without returning while
// another such task's goroutine is still leaving is started again too. ants
// counts a goroutine until its last deferred call, after the restart.
func TestWorkersRestartTogether(t *testing.T) {
	t.Parallel()
	for _, end := range []struct {
		name string
		f    func()
	}{{"goexit", runtime.Goexit}, {"panic", func() { panic("boom") }}} {
		t.Run(end.name, func(t *testing.T) {
			t.Parallel()
			const size = 2
			out := &notifyWriter{wrote: make(chan struct{}, 1)}
			var calls [size]atomic.Int64
			gates := [size]chan struct{}{make(chan struct{}), make(chan struct{})}
			again := make(chan int, size)
			w, err := NewWorkers(size, func(i int) {
				if calls[i].Add(1) == 1 {
					<-gates[i]
					end.f()
				}
				again <- i
			}, WithPanicHandler(func(any) {}))
			if err != nil {
				t.Fatal(err)
			}
			w.stderr = out
			// The first task's old goroutine waits here, still counted,
			// until the second task has been started again.
			leaving, restarts := make(chan struct{}), atomic.Int64{}
			release := make(chan struct{})
			w.afterRestart = func() {
				if restarts.Add(1) == 1 {
					close(leaving)
					<-release
					return
				}
				close(release)
			}
			for i := range size {
				if err := w.Invoke(i); err != nil {
					t.Fatal(err)
				}
			}
			close(gates[0])
			recvWithin(t, leaving, "the first task's restart")
			close(gates[1])
			for range size {
				select {
				case <-again:
				case <-out.wrote:
					t.Fatal(out.String())
				case <-time.After(wait):
					t.Fatal("not every task started again")
				}
			}
			if err := w.Release(wait); err != nil {
				t.Fatal(err)
			}
		})
	}
}
