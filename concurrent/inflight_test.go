package concurrent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// TestFreeMemoryShrinksStacks: the idle free takes parked goroutines that
// grew 32 KiB stacks down to the floor that GCs reach (4 KiB, 8 KiB
// under -race, whose frames are larger), which takes three GCs, not the
// one of debug.FreeOSMemory. The floor is read, not assumed: more GCs
// after the free shrink nothing more.
func TestFreeMemoryShrinksStacks(t *testing.T) {
	const n = 256
	stackInuse := func() int64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.StackInuse)
	}
	var grown sync.WaitGroup
	park := make(chan struct{})
	defer close(park)
	for range n {
		grown.Add(1)
		go func() {
			_, _ = demo.Handle(context.Background(), demo.Event{StackKiB: 32})
			grown.Done()
			<-park
		}()
	}
	grown.Wait()
	freeMemory()
	freed := stackInuse()
	for range 3 {
		runtime.GC()
	}
	floor := stackInuse()
	// A free that stopped one halving short leaves at least 4 KiB a
	// goroutine above the floor; allow a quarter of that for the stacks of
	// goroutines other tests left ending.
	if over := freed - floor; over > n<<10 {
		t.Errorf("after the free, %d goroutines parked after growing 32 KiB stacks hold %d KiB of stack above what 3 more GCs leave, want at most %d KiB",
			n, over>>10, n)
	}
}

// TestIdleFreeOncePerBurst: memory is handed back once after a burst, not
// before any invocation, not again while idle, never while an invocation
// is in flight, and again after the next burst. Each burst runs while a
// blocked invocation is in flight, so that no pause between its
// invocations, however slow the machine, splits it in two.
func TestIdleFreeOncePerBurst(t *testing.T) {
	t.Parallel()
	const after = 200 * time.Millisecond
	var frees atomic.Int64

	started, release := make(chan struct{}), make(chan struct{})
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"},
		func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) {
			if string(ev) == `"block"` {
				started <- struct{}{}
				<-release
			}
			return ev, nil
		}, withRuntime(func(rt *Runtime) {
			rt.idle.freeAfter, rt.idle.checkEvery = after, 10*time.Millisecond
			rt.idle.free = func() { frees.Add(1) }
		}))
	waitFrees := func(want int64) {
		t.Helper()
		waitUntil(t, fmt.Sprintf("%d frees", want), func() bool { return frees.Load() >= want })
		if got := frees.Load(); got != want {
			t.Fatalf("%d frees, want %d", got, want)
		}
	}
	burst := func(invocations int) {
		t.Helper()
		done := make(chan rapitest.Result, 1)
		go func() { done <- invoke(t, api, `"block"`) }()
		<-started
		for range invocations {
			invoke(t, api, `1`) // each ends while "block" runs
		}
		before := frees.Load()
		time.Sleep(3 * after)
		if got := frees.Load(); got != before {
			t.Fatalf("%d frees while an invocation was in flight", got-before)
		}
		release <- struct{}{}
		if r := <-done; r.Err != nil {
			t.Fatal(r.Err)
		}
	}

	time.Sleep(3 * after)
	if got := frees.Load(); got != 0 {
		t.Fatalf("%d frees before any invocation", got)
	}
	burst(3)
	waitFrees(1)
	time.Sleep(3 * after)
	waitFrees(1) // not again while idle
	burst(1)
	waitFrees(2)
}

// TestDirectResponseTooLarge: LMIGO_MAX_RESPONSE_BYTES bounds a response
// sent from the handler's own bytes too.
func TestDirectResponseTooLarge(t *testing.T) {
	t.Parallel()
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1", "LMIGO_MAX_RESPONSE_BYTES": "1KiB"},
		func(_ context.Context, n int) (json.RawMessage, error) {
			return json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`), nil
		})
	if r := invoke(t, api, `1025`); r.Err == nil || r.Err.Type != "Function.ResponseSizeTooLarge" {
		t.Fatalf("1025 bytes: got %d bytes, %+v", len(r.Body), r.Err)
	}
	if r := invoke(t, api, `1024`); r.Err != nil || len(r.Body) != 1024 {
		t.Fatalf("1024 bytes: got %d bytes, %+v", len(r.Body), r.Err)
	}
}
