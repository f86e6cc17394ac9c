package concurrent

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestShutdownHooks: the hooks given to WithSIGTERM run once each, in
// order, after the invocation in flight has been answered and within the
// shutdown budget; a hook that panics or overruns its share is logged,
// and the hooks after it still run.
func TestShutdownHooks(t *testing.T) {
	// Room for the 100 ms handler within the drain (budget - budget/hookShare)
	// on a loaded machine: at 500 ms the arm64 suite under qemu once left it
	// unanswered.
	const budget = 2 * time.Second
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	log, logs := observe()
	var (
		mu      sync.Mutex
		ran     []string
		drained atomic.Bool
	)
	record := func(name string) func() {
		return func() {
			mu.Lock()
			ran = append(ran, name+" drained="+strconv.FormatBool(drained.Load()))
			mu.Unlock()
		}
	}
	release := make(chan struct{})
	defer close(release)
	handler := func(context.Context, any) (string, error) {
		time.Sleep(100 * time.Millisecond) // in flight when the shutdown begins
		drained.Store(true)
		return "done", nil
	}
	rt, err := New(handler, WithLogger(log), WithLookupEnv(api.Env(map[string]string{"LMIGO_SHUTDOWN_TIMEOUT": budget.String()})),
		WithSIGTERM(record("first"), func() { panic("second fails") }, func() { <-release }, record("fourth")))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, 2)
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	res := make(chan rapitest.Result, 1)
	go func() { r, _ := api.Invoke(wctx, rapitest.Request{Payload: []byte(`{}`)}); res <- r }()
	waitUntil(t, "the invocation handed out", func() bool { return api.Stats().Invocations == 1 })
	began := time.Now()
	stop()
	if err := wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	took := time.Since(began)
	if r := <-res; r.Err != nil || string(r.Body) != `"done"` {
		t.Fatalf("in-flight invocation: %s %+v", r.Body, r.Err)
	}
	mu.Lock()
	got := append([]string(nil), ran...)
	mu.Unlock()
	if want := []string{"first drained=true", "fourth drained=true"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("hooks ran %q, want %q", got, want)
	}
	if logs.FilterMessage("shutdown hook panicked").Len() != 1 ||
		logs.FilterMessage("shutdown hook did not return within its share of the shutdown budget").Len() != 1 {
		t.Fatalf("the panic and the overrun were not logged once each: %v", logs.All())
	}
	// The budget plus a margin for a loaded machine; never the blocked hook.
	if took > budget+time.Second {
		t.Fatalf("Run returned %v after the cancel, budget %v", took, budget)
	}
}

// TestShutdownHooksUnderEmulator: the emulator's shutdown sends SIGTERM
// (WithSIGTERM registers the extension), and the hooks run in order before
// the runtime's last line, with no SIGKILL.
func TestShutdownHooksUnderEmulator(t *testing.T) {
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/hooks"), MaxConcurrency: 2, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		r, err := e.Invoke(ctx, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Throttled {
			if !r.OK() {
				t.Fatalf("invoke: %+v", r)
			}
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := e.Stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, e.Logs())
	}
	logs := e.Logs()
	first := bytes.Index(logs, []byte("hook 1 ran"))
	panicked := bytes.Index(logs, []byte("shutdown hook panicked"))
	third := bytes.Index(logs, []byte("hook 3 ran"))
	stopped := bytes.Index(logs, []byte("runtime stopped"))
	if first < 0 || panicked < first || third < panicked || stopped < third {
		t.Fatalf("hooks not run in order before the last line (at %d, %d, %d, %d):\n%s", first, panicked, third, stopped, logs)
	}
	if bytes.Contains(logs, []byte("Sending SIGKILL")) {
		t.Fatalf("the runtime was killed:\n%s", logs)
	}
}
