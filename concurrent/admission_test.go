package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
)

// fastAdmission makes rt's admission react at once, for the test.
func fastAdmission(rt *Runtime) {
	g := &rt.mem
	g.checkEvery, g.recheckEvery, g.waitEvery, g.collectMin, g.collectEvery =
		0, 2*time.Millisecond, 20*time.Millisecond, 5*time.Millisecond, 50*time.Millisecond
}

// fakeHeap returns an Option under which the runtime, with fastAdmission,
// reads a live heap of *live (100 at first) against a limit of 1000, and
// forces its GCs through collect.
func fakeHeap(collect func(idle bool)) (live *atomic.Uint64, opt Option) {
	live = new(atomic.Uint64)
	live.Store(100)
	return live, withRuntime(func(rt *Runtime) {
		fastAdmission(rt)
		rt.mem.read = func([]metrics.Sample) (uint64, uint64) { return live.Load(), 1000 }
		rt.mem.collect = collect
	})
}

// TestAdmissionHoldsBackWhileHeapHigh: with the heap reading "high", a
// slot whose invocation ends does not poll again, so the fake API sees
// fewer polls than N; an invocation in flight finishes normally; the
// runtime, idle, forces a GC rather than wait for one; and once the heap
// reads "low" every slot polls again.
func TestAdmissionHoldsBackWhileHeapHigh(t *testing.T) {
	t.Parallel()
	var idleGCs, busyGCs atomic.Int64
	live, heap := fakeHeap(func(idle bool) {
		if idle {
			idleGCs.Add(1)
		} else {
			busyGCs.Add(1)
		}
	})

	const n = 4
	started, release := make(chan struct{}), make(chan struct{})
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "4"},
		func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) {
			if string(ev) == `"block"` {
				close(started)
				<-release
			}
			return ev, nil
		}, heap)

	blocked := make(chan rapitest.Result, 1)
	go func() {
		r, err := api.Invoke(context.Background(), rapitest.Request{Payload: []byte(`"block"`)})
		if err != nil {
			t.Errorf("invoke block: %v", err)
		}
		blocked <- r
	}()
	<-started
	live.Store(900) // above 85 %
	// The three polls out already are answered; their slots do not poll again.
	for range n - 1 {
		if r := invoke(t, api, `"x"`); r.Err != nil || string(r.Body) != `"x"` {
			t.Fatalf("invoke: %s %v", r.Body, r.Err)
		}
	}
	waitUntil(t, "no poll pending", func() bool { return api.Stats().PendingPolls == 0 })
	// The invocation in flight is not affected, and its slot holds back too.
	close(release)
	if r := <-blocked; r.Err != nil || string(r.Body) != `"block"` {
		t.Fatalf("blocked invocation: %s %v", r.Body, r.Err)
	}
	polls := api.Stats().Polls
	// Idle with a high heap: a GC is forced (FreeOSMemory, nothing in flight).
	waitUntil(t, "a forced GC while idle", func() bool { return idleGCs.Load() > 0 })
	time.Sleep(50 * time.Millisecond)
	if s := api.Stats(); s.PendingPolls != 0 || s.Polls != polls {
		t.Fatalf("held back, yet %d polls pending, %d polls since", s.PendingPolls, s.Polls-polls)
	}
	if !rt.mem.held.Load() || rt.mem.holds.Load() != 1 {
		t.Fatalf("held %v, holds %d", rt.mem.held.Load(), rt.mem.holds.Load())
	}

	live.Store(750) // between the marks: still held
	time.Sleep(50 * time.Millisecond)
	if s := api.Stats(); s.PendingPolls != 0 {
		t.Fatalf("resumed above the low mark: %d polls pending", s.PendingPolls)
	}
	live.Store(500) // below 70 %
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatalf("polls did not resume: %v", err)
	}
	if r := invoke(t, api, `"y"`); r.Err != nil || string(r.Body) != `"y"` {
		t.Fatalf("invoke after resume: %s %v", r.Body, r.Err)
	}
	if held := rt.takeHeldTime(); held < 100*time.Millisecond {
		t.Errorf("held back for %v, want at least 100ms", held)
	}
	if s := api.Stats(); s.Violations != 0 || s.Invocations != n+1 || s.Responses != n+1 {
		t.Errorf("stats %+v", s)
	}
}

// TestAdmissionHoldsBackAfterStream: a streamed answer, like a buffered
// one, queues no poll behind it while the heap is high.
func TestAdmissionHoldsBackAfterStream(t *testing.T) {
	t.Parallel()
	live, heap := fakeHeap(func(bool) {})

	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"},
		func(context.Context, struct{}) (io.Reader, error) { return strings.NewReader("streamed"), nil }, heap)
	live.Store(900) // above 85 %
	if r := invoke(t, api, `{}`); r.Err != nil || string(r.Body) != "streamed" {
		t.Fatalf("invoke: %s %v", r.Body, r.Err)
	}
	time.Sleep(50 * time.Millisecond) // time for a queued poll to arrive
	if s := api.Stats(); s.PendingPolls != 0 {
		t.Fatalf("held back, yet %d polls pending", s.PendingPolls)
	}
	live.Store(500) // below 70 %
	if r := invoke(t, api, `{}`); r.Err != nil || string(r.Body) != "streamed" {
		t.Fatalf("invoke after resume: %s %v", r.Body, r.Err)
	}
}

// TestAdmissionOffWithoutLimit: without a memory limit nothing is held
// back, however large the heap.
func TestAdmissionOffWithoutLimit(t *testing.T) {
	t.Parallel()
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"},
		func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) { return ev, nil },
		withRuntime(func(rt *Runtime) {
			fastAdmission(rt)
			rt.mem.read = func([]metrics.Sample) (uint64, uint64) { return 1 << 40, 1<<63 - 1 }
		}))
	for range 5 {
		if r := invoke(t, api, `"x"`); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := api.WaitPolls(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if rt.mem.holds.Load() != 0 {
		t.Error("held back without a memory limit")
	}
}

// TestAdmissionKeepsHeapUnderLimit, end to end with the real heap figure:
// under a 64 MiB memory limit, each invocation adds 1 MiB to a cache the
// handler keeps, so that without admission the heap would reach 128 MiB in
// 64 invocations. The runtime stops polling before the limit: further
// invokes find no poll and are throttled (here they time out waiting), the
// cache stays below the limit, and once the cache is dropped the runtime
// (idle, with a live-heap figure that no GC would otherwise refresh) forces
// a GC, sees the heap low and polls again. Not parallel: it sets the
// process's memory limit, and reads the process's heap.
func TestAdmissionKeepsHeapUnderLimit(t *testing.T) {
	const limit, chunk = 64 << 20, 1 << 20
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > limit/4 {
		t.Skipf("the test process has %d MiB of heap already", ms.HeapAlloc>>20)
	}
	old := debug.SetMemoryLimit(limit)
	var mu sync.Mutex
	var cache [][]byte
	t.Cleanup(func() {
		mu.Lock()
		cache = nil
		mu.Unlock()
		debug.SetMemoryLimit(old)
	})

	const n = 2
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"},
		func(context.Context, json.RawMessage) (json.RawMessage, error) {
			b := make([]byte, chunk)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			mu.Lock()
			cache = append(cache, b)
			mu.Unlock()
			return json.RawMessage(`"ok"`), nil
		}, withRuntime(func(rt *Runtime) {
			fastAdmission(rt)
			rt.mem.checkEvery = time.Millisecond
		}))

	served, throttled := 0, 0
	for i := 0; i < 2*limit/chunk && throttled < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`)})
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			throttled++ // no poll: Lambda would throttle and retry elsewhere
		case err != nil || r.Err != nil:
			t.Fatalf("invoke %d: %v %v", i, err, r.Err)
		default:
			served++
		}
	}
	mu.Lock()
	cached := len(cache) * chunk
	mu.Unlock()
	t.Logf("%d served, %d throttled, cache %d MiB of a %d MiB limit, held back %d times",
		served, throttled, cached>>20, limit>>20, rt.mem.holds.Load())
	if throttled == 0 || rt.mem.holds.Load() == 0 {
		t.Fatalf("never held back: %d served, cache %d MiB", served, cached>>20)
	}
	if cached >= limit {
		t.Fatalf("cache reached %d MiB, the limit is %d MiB", cached>>20, limit>>20)
	}

	mu.Lock()
	cache = nil
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatalf("polls did not resume after the cache was dropped: %v", err)
	}
	if r := invoke(t, api, `{}`); r.Err != nil {
		t.Fatal(r.Err)
	}
	if held := rt.takeHeldTime(); held <= 0 {
		t.Errorf("held-back time %v", held)
	}
}

// TestHoldingDoesNotAllocate: the check on every post reads the heap
// figure without allocating.
func TestHoldingDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rt := &Runtime{log: zap.NewNop()}
	rt.mem.init()
	fastAdmission(rt) // checkEvery 0: every call reads
	if a := testing.AllocsPerRun(1000, func() { _ = rt.holding() }); a != 0 {
		t.Errorf("holding allocates %v times a call", a)
	}
}
