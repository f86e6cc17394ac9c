package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// startEmulator builds the reference bootstrap and runs it under the
// emulator, skipping where the emulator cannot run.
func startEmulator(t *testing.T, opts rie.Options) *rie.Emulator {
	t.Helper()
	if err := rie.Supported(); err != nil {
		t.Skipf("emulator cannot run here: %v", err)
	}
	opts.Bootstrap = rie.BuildT(t, "github.com/lmigo/lmigo/cmd/bootstrap")
	return rie.StartT(t, opts)
}

// runtimeLine finds the runtime's JSON log line with message msg and, if
// requestID is not empty, that request ID, in the emulator's output.
func runtimeLine(logs []byte, msg, requestID string) (map[string]any, bool) {
	for _, line := range bytes.Split(logs, []byte("\n")) {
		i := bytes.IndexByte(line, '{')
		if i < 0 || !bytes.Contains(line, []byte(msg)) {
			continue
		}
		var m map[string]any
		if json.Unmarshal(line[i:], &m) != nil || m["message"] != msg {
			continue
		}
		if requestID == "" || m["requestId"] == requestID {
			return m, true
		}
	}
	return nil, false
}

// waitLine waits for a runtime log line (waitBy).
func waitLine(t *testing.T, e *rie.Emulator, msg, requestID string) map[string]any {
	t.Helper()
	for deadline := waitBy(t); ; time.Sleep(20 * time.Millisecond) {
		if m, ok := runtimeLine(e.Logs(), msg, requestID); ok {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q line for %q in:\n%s", msg, requestID, e.Logs())
		}
	}
}

// waitHandedOut waits until the emulator has handed the
// invocation requestID to the runtime: from then on it is in flight,
// however slow the machine.
func waitHandedOut(t *testing.T, e *rie.Emulator, requestID string) {
	t.Helper()
	for deadline := waitBy(t); !bytes.Contains(e.Logs(), []byte("START RequestId: "+requestID+"\t")); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("invocation %s not handed out:\n%s", requestID, e.Logs())
		}
	}
}

// waitBy bounds a wait for what takes milliseconds: shortly before the
// test's own deadline, so that only a hung test, never a slow machine,
// meets it.
func waitBy(t *testing.T) time.Time {
	if d, ok := t.Deadline(); ok {
		return d.Add(-time.Until(d) / 20)
	}
	return time.Now().Add(10 * time.Minute)
}

// waitStarted waits until the demo handler of requestID announced it runs
// ({"announce":true}).
func waitStarted(t *testing.T, e *rie.Emulator, requestID string) {
	t.Helper()
	for deadline := waitBy(t); !bytes.Contains(e.Logs(), []byte("demo: started "+requestID+"\n")); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("invocation %s not started:\n%s", requestID, e.Logs())
		}
	}
}

// runtimePID is the PID of the runtime process in the emulator's namespace.
func runtimePID(t *testing.T, e *rie.Emulator) int {
	t.Helper()
	for _, p := range e.Processes() {
		if p.UID == 993 {
			return p.PID
		}
	}
	t.Fatal("no runtime process")
	return 0
}

// TestPanicInOneOfEightUnderEmulator: of 8 invocations in flight at once
// one panics; it gets a function error with the panic value and stack, the
// 7 others their answers, and the same process serves all 8 slots after.
func TestPanicInOneOfEightUnderEmulator(t *testing.T) {
	const n = 8
	e := startEmulator(t, rie.Options{MaxConcurrency: n, Timeout: 15 * time.Second})
	pid := runtimePID(t, e)

	results := make([]rie.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			payload := fmt.Sprintf(`{"gather":%d,"id":%d}`, n-1, i)
			if i == 3 {
				// Panics while the 7 others wait for each other.
				payload = `{"panic":true,"sleep_ms":300}`
			}
			results[i] = invokeRetrying(t, e, payload)
		})
	}
	wg.Wait()
	for i, r := range results {
		if i == 3 {
			if r.Status != http.StatusOK || r.FunctionError == "" ||
				!bytes.Contains(r.Body, []byte(`"errorMessage":"demo: panic requested"`)) || !bytes.Contains(r.Body, []byte(`"stackTrace":[{`)) {
				t.Fatalf("panic: status %d, error %q, body %s", r.Status, r.FunctionError, r.Body)
			}
			continue
		}
		var rep demo.Reply
		if !r.OK() || json.Unmarshal(r.Body, &rep) != nil || rep.Gathered != n-1 || string(rep.ID) != fmt.Sprint(i) {
			t.Fatalf("invocation %d: status %d, error %q, body %s", i, r.Status, r.FunctionError, r.Body)
		}
	}
	waitLine(t, e, "invocation panicked", "")

	// All 8 slots, same process.
	for i := range n {
		wg.Go(func() {
			if r := invokeRetrying(t, e, fmt.Sprintf(`{"gather":%d,"id":%d}`, n, 100+i)); !r.OK() {
				t.Errorf("after the panic: status %d, error %q, body %s", r.Status, r.FunctionError, r.Body)
			}
		})
	}
	wg.Wait()
	if got := runtimePID(t, e); got != pid {
		t.Fatalf("runtime process %d replaced by %d", pid, got)
	}
}

// TestRefusedAnswersUnderEmulator: the emulator's 410 for a late answer
// (the handler ignored its deadline) and 400 for an answer whose caller
// left are logged with the request ID, and the runtime keeps serving
// (aws-lambda-go exits on either, and the emulator shuts down). A response
// over LMIGO_MAX_RESPONSE_BYTES is refused before anything is sent.
func TestRefusedAnswersUnderEmulator(t *testing.T) {
	const n = 2
	e := startEmulator(t, rie.Options{MaxConcurrency: n, Timeout: time.Second,
		Env: []string{"LMIGO_MAX_RESPONSE_BYTES=1MiB"}})
	pid := runtimePID(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Late: cpu_ms ignores the deadline.
	r, err := e.InvokeWith(ctx, []byte(`{"cpu_ms":1500}`), http.Header{rie.RequestIDHeader: {"late-1"}})
	if err != nil || r.FunctionError != "Sandbox.Timedout" {
		t.Fatalf("late: %v, error %q, body %s", err, r.FunctionError, r.Body)
	}
	m := waitLine(t, e, "the Runtime API did not accept the answer", "late-1")
	if !strings.Contains(fmt.Sprint(m["error"]), "status 410") || m["level"] != "WARN" {
		t.Fatalf("late answer logged as %v", m)
	}

	// The caller leaves while the handler runs.
	gone, goneCancel := context.WithCancel(ctx)
	left := make(chan struct{})
	go func() {
		defer close(left)
		_, _ = e.InvokeWith(gone, []byte(`{"sleep_ms":400}`), http.Header{rie.RequestIDHeader: {"left-1"}})
	}()
	waitHandedOut(t, e, "left-1")
	goneCancel()
	<-left
	m = waitLine(t, e, "the Runtime API did not accept the answer", "left-1")
	if !strings.Contains(fmt.Sprint(m["error"]), "status 400") {
		t.Fatalf("answer after the caller left logged as %v", m)
	}

	// Over LMIGO_MAX_RESPONSE_BYTES: the runtime's own error, nothing sent.
	r = invokeRetrying(t, e, `{"size":2097152}`)
	if r.FunctionError != "Function.ResponseSizeTooLarge" || !bytes.Contains(r.Body, []byte("LMIGO_MAX_RESPONSE_BYTES")) {
		t.Fatalf("oversized: error %q, body %.300s", r.FunctionError, r.Body)
	}

	// Both slots still serve, in the same process.
	for i := range 2 * n {
		if r := invokeRetrying(t, e, fmt.Sprintf(`{"id":%d}`, i)); !r.OK() {
			t.Fatalf("after the refusals: status %d, error %q", r.Status, r.FunctionError)
		}
	}
	if got := runtimePID(t, e); got != pid {
		t.Fatalf("runtime process %d replaced by %d", pid, got)
	}
	if bytes.Contains(e.Logs(), []byte("Runtime.ExitError")) {
		t.Fatalf("the runtime exited:\n%s", e.Logs())
	}
}

// TestSIGTERMUnderEmulator: with LMIGO_SIGTERM=1 the runtime registers an
// internal extension, so that the emulator's shutdown sends it SIGTERM:
// the emulator first aborts the invocation in flight (its caller gets an
// error), the runtime lets the handler finish, logs "runtime stopped" and
// exits 0 before the emulator's 600 ms SIGKILL. The handler ends at SIGTERM
// rather than after a fixed sleep, so that a busy machine leaves the
// shutdown its whole 600 ms. Without the extension the
// runtime is SIGKILLed at once and logs nothing.
func TestSIGTERMUnderEmulator(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sigterm bool
	}{{"LMIGO_SIGTERM=1", true}, {"without the extension", false}} {
		t.Run(tt.name, func(t *testing.T) {
			opts := rie.Options{MaxConcurrency: 2, Timeout: 5 * time.Second, Env: []string{"AWS_LAMBDA_LOG_LEVEL=DEBUG"}}
			if tt.sigterm {
				opts.Env = append(opts.Env, "LMIGO_SIGTERM=1")
			}
			e := startEmulator(t, opts)
			const registered = "internal extension registered: Lambda sends SIGTERM before shutdown"
			if tt.sigterm {
				// The emulator copies the runtime's output a moment later.
				waitLine(t, e, registered, "")
			}
			inflight := make(chan rie.Result, 1)
			go func() {
				ctx, cancel := context.WithDeadline(context.Background(), waitBy(t))
				defer cancel()
				r, err := e.InvokeWith(ctx, []byte(`{"sleep_ms":4000,"until_sigterm":true,"announce":true}`), http.Header{rie.RequestIDHeader: {"inflight-1"}})
				if err != nil {
					r.FunctionError = err.Error()
				}
				inflight <- r
			}()
			// The handler runs: handed out is not enough, as a poll the
			// shutdown cancels before it read its answer loses it.
			waitStarted(t, e, "inflight-1")
			start := time.Now()
			if err := e.Stop(); err != nil {
				t.Fatalf("stop: %v\n%s", err, e.Logs())
			}
			took := time.Since(start)
			r := <-inflight
			t.Logf("emulator stopped in %v; the in-flight invoke got status %d, %q %s", took.Round(time.Millisecond), r.Status, r.FunctionError, r.Body)
			if r.Status == 0 || r.OK() {
				t.Errorf("in-flight invoke not reported as aborted: %+v", r)
			}
			logs := e.Logs()
			stopped, ok := runtimeLine(logs, "runtime stopped", "")
			if !tt.sigterm {
				if _, reg := runtimeLine(logs, registered, ""); reg {
					t.Fatalf("extension registered without LMIGO_SIGTERM:\n%s", logs)
				}
				if ok {
					t.Fatalf("runtime stopped gracefully without the extension:\n%s", logs)
				}
				return
			}
			if !ok || stopped["cause"] != "terminated signal received" {
				t.Fatalf("no graceful stop after SIGTERM:\n%s", logs)
			}
			if bytes.Contains(logs, []byte("Sending SIGKILL")) {
				t.Fatalf("the runtime was killed:\n%s", logs)
			}
			// The handler finished; its answer came after the abort, and
			// the emulator refused it (400): reported, not lost silently.
			if _, ok := runtimeLine(logs, "the Runtime API did not accept the answer", "inflight-1"); !ok {
				t.Fatalf("the in-flight invocation's answer was not logged:\n%s", logs)
			}
		})
	}
}

// TestLongErrorUnderEmulator: a handler error whose message (100 KiB) is
// longer than the emulator's 64 KiB line buffer. The runtime's line about
// it is cut to fit, so the emulator's copy of the runtime's output goes on:
// 30 more invocations, each logging a 4 KiB error (enough to fill the
// pipe of a copy that stopped), are all answered, and the cut line is in
// the emulator's output. The caller gets the message whole.
func TestLongErrorUnderEmulator(t *testing.T) {
	e := startEmulator(t, rie.Options{MaxConcurrency: 2, Timeout: 10 * time.Second})
	long := strings.Repeat("0123456789abcdef", 100<<10/16)
	fail := func(msg string) string {
		b, err := json.Marshal(demo.Event{Fail: msg})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	r := invokeRetrying(t, e, fail(long))
	if r.Status != http.StatusOK || r.FunctionError == "" || !bytes.Contains(r.Body, []byte(`"errorMessage":"`+long+`"`)) {
		t.Fatalf("long error: status %d, error %q, body of %d bytes", r.Status, r.FunctionError, len(r.Body))
	}
	for i := range 30 {
		msg := fmt.Sprintf("%04d %s", i, strings.Repeat("x", 4<<10))
		r := invokeRetrying(t, e, fail(msg))
		if r.Status != http.StatusOK || r.FunctionError == "" || !bytes.Contains(r.Body, []byte(msg)) {
			t.Fatalf("invocation %d after the long error: status %d, error %q, body %.200s", i, r.Status, r.FunctionError, r.Body)
		}
	}
	var cut bool
	for line := range bytes.Lines(e.Logs()) {
		if bytes.Contains(line, []byte(`"message":"invocation failed"`)) && bytes.Contains(line, []byte("…[cut ")) {
			cut = true
		}
		if len(line) > 64<<10 {
			t.Errorf("a line of %d bytes in the emulator's output", len(line))
		}
	}
	if !cut {
		t.Errorf("no cut line in the emulator's output")
	}
}
