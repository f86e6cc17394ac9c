package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
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

// countHeapReads returns an Option that counts rt's heap readings in reads;
// it goes after the Option that sets the reading.
func countHeapReads(reads *atomic.Int64) Option {
	return withRuntime(func(rt *Runtime) {
		read := rt.mem.read
		rt.mem.read = func(s []metrics.Sample) (uint64, uint64) { reads.Add(1); return read(s) }
	})
}

// heapReadsPass waits until the heap has been read k more times: the pollers
// held back have looked again, whatever the machine's speed.
func heapReadsPass(t *testing.T, reads *atomic.Int64, k int64) {
	t.Helper()
	from := reads.Load()
	waitUntil(t, "the heap read again", func() bool { return reads.Load() >= from+k })
}

// TestAdmissionHoldsBackWhileHeapHigh: with the heap reading "high", a
// slot whose invocation ends does not poll again while another runs, so
// the fake API sees fewer polls than N; an invocation in flight finishes
// normally; the runtime, idle, forces a GC rather than wait for one and
// lets one slot poll; and once the heap reads "low" every slot polls again.
func TestAdmissionHoldsBackWhileHeapHigh(t *testing.T) {
	t.Parallel()
	var idleGCs, busyGCs, reads atomic.Int64
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
		}, heap, countHeapReads(&reads))

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
	// Idle with a high heap: a GC is forced (FreeOSMemory, nothing in
	// flight), and one slot, only one, polls.
	waitUntil(t, "a forced GC while idle", func() bool { return idleGCs.Load() > 0 })
	waitUntil(t, "one poll pending", func() bool { return api.Stats().PendingPolls == 1 })
	heldFrom, polls := time.Now(), api.Stats().Polls
	heapReadsPass(t, &reads, 20)
	if s := api.Stats(); s.PendingPolls != 1 || s.Polls != polls {
		t.Fatalf("held back, yet %d polls pending, %d polls since", s.PendingPolls, s.Polls-polls)
	}
	if !rt.mem.held.Load() || rt.mem.holds.Load() != 1 {
		t.Fatalf("held %v, holds %d", rt.mem.held.Load(), rt.mem.holds.Load())
	}

	live.Store(750) // between the marks: still held
	heapReadsPass(t, &reads, 20)
	if s := api.Stats(); s.PendingPolls != 1 {
		t.Fatalf("resumed above the low mark: %d polls pending", s.PendingPolls)
	}
	heldFor := time.Since(heldFrom)
	live.Store(500) // below 70 %
	ctx, cancel := testContext(t)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatalf("polls did not resume: %v", err)
	}
	if r := invoke(t, api, `"y"`); r.Err != nil || string(r.Body) != `"y"` {
		t.Fatalf("invoke after resume: %s %v", r.Body, r.Err)
	}
	if held := rt.takeHeldTime(); held < heldFor {
		t.Errorf("held back for %v, want at least %v", held, heldFor)
	}
	if s := api.Stats(); s.Violations != 0 || s.Invocations != n+1 || s.Responses != n+1 {
		t.Errorf("stats %+v", s)
	}
}

// TestAdmissionPollsWhenNothingInFlight: a burst takes the live heap above
// the high mark, then it settles at 75 % of the limit and never drops below
// the low mark. With nothing in flight waiting frees nothing, so one slot,
// and only one, polls: invocations are served one at a time until the heap
// is low. With nothing changing, no GC is forced.
func TestAdmissionPollsWhenNothingInFlight(t *testing.T) {
	t.Parallel()
	var gcs, reads atomic.Int64
	live, heap := fakeHeap(func(bool) { gcs.Add(1) })

	const n = 4
	started, release := make(chan struct{}, n), make(chan struct{})
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "4"},
		func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) {
			if string(ev) == `"block"` {
				started <- struct{}{}
				<-release
			}
			return ev, nil
		}, heap, countHeapReads(&reads))

	// The burst: every slot busy, the heap above 85 % when they answer.
	burst := make(chan rapitest.Result, n)
	for range n {
		go func() { burst <- invoke(t, api, `"block"`) }()
	}
	for range n {
		<-started
	}
	live.Store(900)
	close(release)
	for range n {
		if r := <-burst; r.Err != nil || string(r.Body) != `"block"` {
			t.Fatalf("burst: %s %v", r.Body, r.Err)
		}
	}
	live.Store(750) // settles between the marks
	waitUntil(t, "nothing in flight", func() bool { return rt.idle.inflight.Load() == 0 })
	if !rt.mem.held.Load() {
		t.Fatal("not held back after the burst")
	}

	// Every invocation ended has had its GC; from then on nothing changes.
	waitUntil(t, "the GCs for the ended invocations", func() bool {
		rt.mem.mu.Lock()
		defer rt.mem.mu.Unlock()
		return rt.mem.gcEnded == rt.idle.begun.Load()
	})
	gcsSettled, from := gcs.Load(), time.Now()
	waitUntil(t, "four forced-GC periods", func() bool { return time.Since(from) > 4*rt.mem.collectEvery })
	heapReadsPass(t, &reads, 20)
	if g := gcs.Load() - gcsSettled; g != 0 {
		t.Errorf("%d GCs forced with nothing in flight and nothing ended", g)
	}

	// Nothing in flight: one slot polls, and the invocation is served.
	if r := invoke(t, api, `"x"`); r.Err != nil || string(r.Body) != `"x"` {
		t.Fatalf("invoke while idle and held: %s %v", r.Body, r.Err)
	}
	// One at a time: while one runs, no slot polls.
	release = make(chan struct{})
	first := make(chan rapitest.Result, 1)
	go func() { first <- invoke(t, api, `"block"`) }()
	<-started
	heapReadsPass(t, &reads, 20)
	if p := api.Stats().PendingPolls; p != 0 {
		t.Fatalf("%d polls pending with an invocation in flight and the heap high", p)
	}
	second := make(chan rapitest.Result, 1)
	go func() { second <- invoke(t, api, `"y"`) }()
	heapReadsPass(t, &reads, 20)
	close(release)
	if r := <-first; r.Err != nil || string(r.Body) != `"block"` {
		t.Fatalf("first: %s %v", r.Body, r.Err)
	}
	if r := <-second; r.Err != nil || string(r.Body) != `"y"` {
		t.Fatalf("second: %s %v", r.Body, r.Err)
	}
	waitUntil(t, "one poll pending", func() bool { return api.Stats().PendingPolls == 1 })
	heapReadsPass(t, &reads, 20)
	if p := api.Stats().PendingPolls; p != 1 {
		t.Fatalf("%d polls pending while held with nothing in flight, want 1", p)
	}

	live.Store(500) // below 70 %: every slot polls
	ctx, cancel := testContext(t)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatalf("polls did not resume: %v", err)
	}
	answeredOnce(t, api)
}

// TestAdmissionHoldsBackAfterStream: a streamed answer, like a buffered
// one, queues no poll behind it while the heap is high (and another
// invocation runs, so no slot is let through).
func TestAdmissionHoldsBackAfterStream(t *testing.T) {
	t.Parallel()
	var reads atomic.Int64
	live, heap := fakeHeap(func(bool) {})

	started, release := make(chan struct{}), make(chan struct{})
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"},
		func(_ context.Context, ev struct{ Block bool }) (io.Reader, error) {
			if ev.Block {
				close(started)
				<-release
			}
			return strings.NewReader("streamed"), nil
		}, heap, countHeapReads(&reads))
	blocked := make(chan rapitest.Result, 1)
	go func() { blocked <- invoke(t, api, `{"Block":true}`) }()
	<-started
	live.Store(900) // above 85 %
	if r := invoke(t, api, `{}`); r.Err != nil || string(r.Body) != "streamed" {
		t.Fatalf("invoke: %s %v", r.Body, r.Err)
	}
	heapReadsPass(t, &reads, 20) // a queued poll is on the wire before the slot is free
	if s := api.Stats(); s.PendingPolls != 0 {
		t.Fatalf("held back, yet %d polls pending", s.PendingPolls)
	}
	live.Store(500) // below 70 %
	close(release)
	if r := <-blocked; r.Err != nil || string(r.Body) != "streamed" {
		t.Fatalf("blocked invocation: %s %v", r.Body, r.Err)
	}
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
	ctx, cancel := testContext(t)
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
// handler keeps, so that without admission the heap would reach the limit
// in 64 invocations. The runtime holds back before the cache reaches the
// limit; held, with nothing in flight, it still takes invocations (waiting
// frees nothing). Once the cache is dropped, the next invocation's end
// forces a GC (the live heap figure moves only at a GC), the runtime sees
// the heap low and every slot polls again. Not parallel: it sets the
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
	dropCache := func() {
		mu.Lock()
		cache = nil
		mu.Unlock()
	}
	t.Cleanup(func() {
		dropCache()
		debug.SetMemoryLimit(old)
	})

	const n = 2
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"},
		func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) {
			if string(ev) == `"keep"` {
				b := make([]byte, chunk)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1
				}
				mu.Lock()
				cache = append(cache, b)
				mu.Unlock()
			}
			return json.RawMessage(`"ok"`), nil
		}, withRuntime(func(rt *Runtime) {
			fastAdmission(rt)
			rt.mem.checkEvery = time.Millisecond
		}))

	served := 0
	for ; served < 2*limit/chunk && !rt.mem.held.Load(); served++ {
		if r := invoke(t, api, `"keep"`); r.Err != nil {
			t.Fatalf("invoke %d: %v", served, r.Err)
		}
	}
	mu.Lock()
	cached := len(cache) * chunk
	mu.Unlock()
	t.Logf("held back after %d invocations, cache %d MiB of a %d MiB limit", served, cached>>20, limit>>20)
	if !rt.mem.held.Load() {
		t.Fatalf("never held back: %d served, cache %d MiB", served, cached>>20)
	}
	if cached >= limit {
		t.Fatalf("cache reached %d MiB, the limit is %d MiB", cached>>20, limit>>20)
	}

	// Held, with nothing in flight: invocations are still taken.
	for range 3 {
		if r := invoke(t, api, `"drop"`); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if !rt.mem.held.Load() {
		t.Fatal("the hold ended with the cache still kept")
	}
	dropCache()
	if r := invoke(t, api, `"drop"`); r.Err != nil {
		t.Fatal(r.Err)
	}
	ctx, cancel := testContext(t)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatalf("polls did not resume after the cache was dropped: %v", err)
	}
	if held := rt.takeHeldTime(); held <= 0 {
		t.Errorf("held-back time %v", held)
	}
	answeredOnce(t, api)
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

// TestMemoryNearlyExhausted: when the live heap, read after a GC, crosses
// 95 % of the limit, one ERROR names the invocations in flight (here the
// two that hold the slots) and the live heap. It is said once an episode:
// not again while the heap stays above the low mark, again once it came
// below it and crosses anew.
func TestMemoryNearlyExhausted(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	release := make(chan struct{})
	defer close(release)
	var live atomic.Uint64
	live.Store(100)
	inside := make(chan string, 2)
	log := startReporting(t, api, 2, map[string]string{"LMIGO_REPORT": "off"}, func(ctx context.Context) error {
		inside <- RequestID(ctx)
		<-release
		return nil
	}, withRuntime(func(rt *Runtime) {
		rt.mem.read = func([]metrics.Sample) (uint64, uint64) { return live.Load(), 1000 }
	}))
	rt := log.rt
	ctx, cancel := testContext(t)
	defer cancel()
	var ids []string
	for range 2 {
		go func() { _, _ = api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`)}) }()
		ids = append(ids, <-inside)
	}

	live.Store(951)
	runtime.GC() // the finalizer of each GC reads the figure
	var line map[string]any
	for line == nil {
		for l := range strings.Lines(log.String()) {
			if strings.Contains(l, `"memory nearly exhausted"`) {
				if err := json.Unmarshal([]byte(l), &line); err != nil {
					t.Fatal(err)
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no line after a GC at 95.1 %%:\n%s", log.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	inFlight, _ := line["inFlight"].([]any)
	if line["level"] != "ERROR" || line["heapBytes"] != float64(951) || len(inFlight) != 2 ||
		!slices.Contains(inFlight, any(ids[0])) || !slices.Contains(inFlight, any(ids[1])) {
		t.Errorf("line %v, want ERROR with heapBytes 951 and inFlight %v", line, ids)
	}

	said := func() int { return strings.Count(log.String(), `"memory nearly exhausted"`) }
	check := func(heap uint64) {
		rt.mem.words.Lock()
		defer rt.mem.words.Unlock()
		rt.checkExhausted(heap, 1000)
	}
	for _, step := range []struct {
		heap uint64
		said int
	}{{990, 1}, {800, 1}, {960, 1}, {699, 1}, {940, 1}, {950, 2}, {1000, 2}} {
		// A GC between steps reads live: it must see the step's heap too.
		live.Store(step.heap)
		check(step.heap)
		if n := said(); n != step.said {
			t.Fatalf("at a live heap of %d: said %d times, want %d:\n%s", step.heap, n, step.said, log.String())
		}
	}
}

// TestMemoryNearlyExhaustedUnderEmulator: under the emulator, with 128 MB
// of function memory (a soft limit of 115.2 MiB), a handler keeps what it
// allocates until the process dies: the ERROR naming it is in the log
// before the process is gone. The platform kills for memory at the
// function's memory size; here RLIMIT_DATA at twice that (prlimit, as
// the bootstrap's wrapper) stands in for it: past it the Go runtime can
// map no more memory and dies "out of memory".
func TestMemoryNearlyExhaustedUnderEmulator(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skipf("no prlimit (util-linux): %v", err)
	}
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/oom"), MaxConcurrency: 2,
		Env:  []string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128"},
		Exec: append([]string{"prlimit", "--data=536870912"}, strings.Fields(os.Getenv(rie.ExecEnv))...)})
	ctx, cancel := testContext(t)
	defer cancel()
	if r := invokeRetrying(t, ctx, e, "", `{}`); !r.OK() {
		t.Fatalf("a first invocation: %+v\n%s", r, e.Logs())
	}
	r := invokeRetrying(t, ctx, e, "grow-1", `{"grow":true}`)
	select {
	case <-e.Done():
	case <-ctx.Done():
		t.Fatalf("the runtime did not die:\n%s", e.Logs())
	}
	logs := e.Logs()
	words := bytes.Index(logs, []byte(`"memory nearly exhausted"`))
	died := bytes.Index(logs, []byte("out of memory"))
	if words < 0 || died < 0 || words > died {
		t.Fatalf("the last words at %d, the death at %d; want both, the words first (invoke: %+v):\n%s", words, died, r, logs)
	}
	line := logs[bytes.LastIndexByte(logs[:words], '\n')+1:]
	line = line[:bytes.IndexByte(line, '\n')]
	if !bytes.Contains(line, []byte(`"inFlight":["grow-1"]`)) || !bytes.Contains(line, []byte(`"level":"ERROR"`)) {
		t.Errorf("the line does not name grow-1 in flight at ERROR: %s", line)
	}
	t.Logf("%s\ninvoke: %s %s", line, r.FunctionError, r.Body)
}
