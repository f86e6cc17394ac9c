package concurrent

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// invokeRetrying invokes e with payload under request ID id (none if ""),
// again while throttled, until ctx ends.
func invokeRetrying(t *testing.T, ctx context.Context, e *rie.Emulator, id, payload string) rie.Result {
	t.Helper()
	h := http.Header{}
	if id != "" {
		h.Set(rie.RequestIDHeader, id)
	}
	for {
		r, err := e.InvokeWith(ctx, []byte(payload), h)
		if err != nil {
			t.Fatalf("invoke %s: %v\n%s", payload, err, e.Logs())
		}
		if !r.Throttled {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("invoke %s: throttled until the test's bound\n%s", payload, e.Logs())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// hangUnderEmulator sends one blocking invocation per ID, all at once, and
// returns once the emulator has answered each "Task timed out".
func hangUnderEmulator(t *testing.T, ctx context.Context, e *rie.Emulator, ids ...string) {
	t.Helper()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if r := invokeRetrying(t, ctx, e, id, `{"block":true}`); r.FunctionError != "Sandbox.Timedout" {
				t.Errorf("blocked invocation %s: %+v, want Sandbox.Timedout", id, r)
			}
		})
	}
	wg.Wait()
}

// together proves that n slots serve at once: n invocations meet at the
// bootstrap's barrier within their deadline.
func together(t *testing.T, ctx context.Context, e *rie.Emulator, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if r := invokeRetrying(t, ctx, e, "", fmt.Sprintf(`{"barrier":%d}`, n)); !r.OK() || string(r.Body) != `"together"` {
				t.Errorf("barrier invocation: %s %+v", r.Body, r)
			}
		})
	}
	wg.Wait()
}

// TestOverrunUnderEmulator: at N=4 under the emulator, 4 handlers that
// block until released: after each deadline and the grace (the default),
// the environment serves again at full N (4 invocations at once); when
// the handlers are let go, their late answers are logged, and the
// environment still serves at full N, the process alive.
func TestOverrunUnderEmulator(t *testing.T) {
	const n = 4
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/overrun"), MaxConcurrency: n, Timeout: time.Second})
	ctx, cancel := testContext(t)
	defer cancel()
	ids := []string{"hung-1", "hung-2", "hung-3", "hung-4"}
	hangUnderEmulator(t, ctx, e, ids...)
	together(t, ctx, e, n)
	if r := invokeRetrying(t, ctx, e, "", `{"release":true}`); !r.OK() {
		t.Fatalf("release: %+v", r)
	}
	for _, id := range ids {
		waitLogged(t, ctx, e, id, msgOverrunReturned)
		waitLogged(t, ctx, e, id, msgOverrun)
	}
	together(t, ctx, e, n)
	select {
	case <-e.Done():
		t.Fatalf("the runtime exited:\n%s", e.Logs())
	default:
	}
}

// TestWedgedUnderEmulator: at N=2 with LMIGO_MAX_OVERRUNS=1 under the
// emulator, three handlers that block leave no slot that can serve; after
// LMIGO_WEDGED_EXIT the runtime writes the FATAL line naming them, and
// exits, and the emulator with it (Lambda would replace the environment).
func TestWedgedUnderEmulator(t *testing.T) {
	const wedged = time.Second
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/overrun"), MaxConcurrency: 2, Timeout: time.Second,
		Env: []string{"LMIGO_MAX_OVERRUNS=1", "LMIGO_WEDGED_EXIT=" + wedged.String()}})
	ctx, cancel := testContext(t)
	defer cancel()
	hangUnderEmulator(t, ctx, e, "hung-1", "hung-2")
	hangUnderEmulator(t, ctx, e, "hung-3") // on the one slot replaced
	last := time.Now()
	select {
	case <-e.Done():
	case <-ctx.Done():
		t.Fatalf("the runtime did not exit:\n%s", e.Logs())
	}
	took := time.Since(last)
	logs := e.Logs()
	i := bytes.Index(logs, []byte(msgWedged))
	if i < 0 {
		t.Fatalf("no FATAL line:\n%s", logs)
	}
	line := logs[bytes.LastIndexByte(logs[:i], '\n')+1:]
	line = line[:bytes.IndexByte(line, '\n')]
	for _, want := range []string{`"level":"FATAL"`, "hung-1", "hung-2", "hung-3", `"pastDeadline"`, "main.main.func1"} {
		if !bytes.Contains(line, []byte(want)) {
			t.Errorf("the FATAL line lacks %s: %s", want, line)
		}
	}
	// The last "Task timed out" came before last; the wedge began at the
	// grace after it at the earliest.
	if took < wedged {
		t.Errorf("exited %v after the last timeout, before LMIGO_WEDGED_EXIT (%v)", took, wedged)
	}
	t.Logf("exited %v after the last timeout; FATAL line %d bytes", took, len(line))
}

// waitLogged waits until the emulator's log holds a line with msg for id.
func waitLogged(t *testing.T, ctx context.Context, e *rie.Emulator, id, msg string) {
	t.Helper()
	for {
		for line := range bytes.SplitSeq(e.Logs(), []byte("\n")) {
			if bytes.Contains(line, []byte(msg)) && bytes.Contains(line, []byte(`"requestId":"`+id+`"`)) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %q logged for %s:\n%s", msg, id, e.Logs())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
