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
//
// Nothing here waits on the machine's speed: the handler is in flight
// before the shutdown begins and returns when the test releases it, once
// the runtime is stopping; the budget is the largest the runtime accepts,
// so the drain (four fifths of it) ends with the handler's answer, not at
// its deadline.
func TestShutdownHooks(t *testing.T) {
	const budget = 10 * time.Second // LMIGO_SHUTDOWN_TIMEOUT's maximum
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
	started, proceed := make(chan struct{}), make(chan struct{})
	handler := func(context.Context, any) (string, error) {
		close(started)
		<-proceed // in flight when the shutdown begins
		drained.Store(true)
		return "done", nil
	}
	rt, err := New(handler, WithLogger(log), WithLookupEnv(api.Env(map[string]string{"LMIGO_SHUTDOWN_TIMEOUT": budget.String()})),
		WithSIGTERM(record("first"), func() { panic("second fails") }, func() { <-release }, record("fourth")))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, 2)
	res := make(chan rapitest.Result, 1)
	go func() {
		// No deadline of the fake's to race with: the test's own bounds it.
		r, _ := api.Invoke(t.Context(), rapitest.Request{Payload: []byte(`{}`), Timeout: time.Hour})
		res <- r
	}()
	// Stopped only once the handler runs: a poll cancelled while its
	// invocation is on the wire would lose it (as on Lambda, where no
	// invocation comes after SIGTERM).
	<-started
	began := time.Now()
	stop()
	waitUntil(t, "the runtime stopping", rt.stopping.Load)
	close(proceed)
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
	// Run returned with the third hook still blocked (it never ends before
	// the test does); the overrun's share is about half the budget, so
	// this bound leaves the other half as margin.
	if took > budget {
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
