package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// withRAPIOptions passes options to the Runtime API client (tests only).
func withRAPIOptions(opts ...rapi.Option) Option {
	return func(o *options) { o.rapi = append(o.rapi, opts...) }
}

// observe returns a logger that records every line at DEBUG and above.
func observe() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.DebugLevel)
	return zap.New(core), logs
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// answeredOnce checks the fake's accounting once every Invoke has
// returned: the runtime answered every invocation exactly once
// (checkAnswered).
func answeredOnce(t *testing.T, api *rapitest.Server) rapitest.Stats {
	t.Helper()
	return answeredAllBut(t, api, 0)
}

// answeredAllBut is answeredOnce for a test that lets unanswered
// invocations end by their deadline or their caller.
func answeredAllBut(t *testing.T, api *rapitest.Server, unanswered int64) rapitest.Stats {
	t.Helper()
	st := api.Stats()
	if err := checkAnswered(st, unanswered); err != nil {
		t.Fatalf("%v: %+v", err, st)
	}
	return st
}

// checkAnswered says why st is not "every invocation answered exactly
// once": the runtime's post ended each invocation but the unanswered ones,
// nothing was posted twice or for an unknown request, and N was never
// exceeded.
func checkAnswered(st rapitest.Stats, unanswered int64) error {
	switch {
	case st.Answered()+unanswered != st.Invocations:
		return fmt.Errorf("%d of %d invocations answered, want all but %d", st.Answered(), st.Invocations, unanswered)
	case st.Duplicates != 0 || st.Unknown != 0:
		return fmt.Errorf("%d duplicate and %d unknown posts", st.Duplicates, st.Unknown)
	case st.Violations != 0:
		return fmt.Errorf("%d polls over N", st.Violations)
	}
	return nil
}

// TestAnsweredOnceFailsOnSilentRuntime: the accounting check fails on a
// runtime stand-in that takes N invocations, within N, and never answers.
func TestAnsweredOnceFailsOnSilentRuntime(t *testing.T) {
	const n = 3
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	ctx, cancel := testContext(t)
	tr := &http.Transport{}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait(); tr.CloseIdleConnections() })
	wg.Go(func() { // takes n invocations one after another, posts nothing
		hc := &http.Client{Transport: tr}
		for range n {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+api.Addr()+"/2018-06-01/runtime/invocation/next", nil)
			if err != nil {
				return
			}
			resp, err := hc.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	})
	for range n {
		// Never answered: the timeout's length does not matter.
		res, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`), Timeout: 50 * time.Millisecond})
		if err != nil || res.Err == nil || res.Err.Type != rapitest.ErrorTypeTimeout {
			t.Fatalf("Invoke = %+v, %v; want a timeout", res, err)
		}
	}
	st := api.Stats()
	if err := checkAnswered(st, 0); err == nil {
		t.Fatalf("the check passes a runtime that answered none of %d invocations: %+v", st.Invocations, st)
	}
	if err := checkAnswered(st, st.Invocations); err != nil {
		t.Fatalf("with every invocation let go unanswered: %v", err)
	}
}

// refusal finds the runtime's warning that the Runtime API refused the
// answer of invocation id.
func refusal(logs *observer.ObservedLogs, id string) (observer.LoggedEntry, bool) {
	for _, e := range logs.FilterMessage("the Runtime API did not accept the answer").All() {
		if e.ContextMap()["requestId"] == id {
			return e, true
		}
	}
	return observer.LoggedEntry{}, false
}

// sleepy answers {"Size":n,"SleepMS":m} with n bytes after m ms, ignoring
// its context, as a handler that does not watch its deadline does.
var sleepy = RawHandler(func(_ context.Context, payload []byte, out *Buffer) error {
	var ev struct{ Size, SleepMS int }
	_ = json.Unmarshal(payload, &ev)
	time.Sleep(time.Duration(ev.SleepMS) * time.Millisecond)
	_, _ = out.Write(bytes.Repeat([]byte("x"), max(ev.Size, 1)))
	return nil
})

// TestRefusedAnswersStayLocal: a /response answered 400, 410 or 413, by
// the fake's own rules or injected, is logged with the request ID, the
// slot is freed and the runtime goes on serving.
func TestRefusedAnswersStayLocal(t *testing.T) {
	const n = 2
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, MaxResponseBytes: 1000})
	log, logs := observe()
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n), "LMIGO_MAX_RESPONSE_BYTES": "4KiB"}, sleepy, WithLogger(log))
	tests := []struct {
		name     string
		req      rapitest.Request
		giveUp   time.Duration // the caller leaves after this (the post then gets 400)
		wantCode int
	}{
		{"400 injected", rapitest.Request{Payload: []byte(`{}`), PostFault: &rapitest.Fault{Status: 400}}, 0, 400},
		{"410 injected", rapitest.Request{Payload: []byte(`{}`), PostFault: &rapitest.Fault{Status: 410}}, 0, 410},
		{"413 injected", rapitest.Request{Payload: []byte(`{}`), PostFault: &rapitest.Fault{Status: 413}}, 0, 413},
		{"413 over the API's cap", rapitest.Request{Payload: []byte(`{"Size":1500}`)}, 0, 413},
		{"410 after the deadline", rapitest.Request{Payload: []byte(`{"SleepMS":300}`), Timeout: 100 * time.Millisecond}, 0, 410},
		{"400 after the caller left", rapitest.Request{Payload: []byte(`{"SleepMS":200}`)}, 50 * time.Millisecond, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := testContext(t)
			defer cancel()
			ictx := ctx
			if tt.giveUp > 0 {
				var c context.CancelFunc
				ictx, c = context.WithTimeout(ctx, tt.giveUp)
				defer c()
			}
			res, err := api.Invoke(ictx, tt.req)
			if err != nil && tt.giveUp == 0 {
				t.Fatal(err)
			}
			var entry observer.LoggedEntry
			waitUntil(t, "the refusal logged", func() (ok bool) { entry, ok = refusal(logs, res.RequestID); return ok })
			if msg := entry.ContextMap()["error"]; entry.Level != zapcore.WarnLevel ||
				!strings.Contains(fmt.Sprint(msg), "status "+strconv.Itoa(tt.wantCode)) {
				t.Fatalf("logged %v %q, want WARN with status %d", entry.Level, msg, tt.wantCode)
			}
			// The slot is free again and the runtime serves.
			if err := api.WaitPolls(ctx, n); err != nil {
				t.Fatal(err)
			}
			if r := invoke(t, api, `{"Size":3}`); r.Err != nil || string(r.Body) != "xxx" {
				t.Fatalf("after the refusal: %s %+v", r.Body, r.Err)
			}
		})
	}
	st := answeredAllBut(t, api, 2) // the one past its deadline, the one its caller left
	if st.Late != 1 || st.Oversized != 1 || st.Canceled != 1 || st.Faults != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestIgnoredDeadline: the context is cancelled at the deadline, but a
// handler that ignores it keeps its slot until it returns (the runtime
// polls no more than N, so an invoke meanwhile is throttled), then its late
// answer gets 410 and the slot serves again.
func TestIgnoredDeadline(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1})
	log, logs := observe()
	ctxErr := make(chan error, 1)
	serve(t, api, env{}, func(ctx context.Context, ev struct{ SleepMS int }) (string, error) {
		time.Sleep(time.Duration(ev.SleepMS) * time.Millisecond)
		ctxErr <- ctx.Err()
		return "late", nil
	}, WithLogger(log))
	ctx, cancel := testContext(t)
	defer cancel()
	res, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"SleepMS":400}`), Timeout: 100 * time.Millisecond})
	if err != nil || res.Err == nil || res.Err.Type != rapitest.ErrorTypeTimeout {
		t.Fatalf("Invoke = %+v, %v; want a timeout", res, err)
	}
	if _, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`)}); !errors.Is(err, rapitest.ErrThrottled) {
		t.Fatalf("invoke while the handler overruns: %v, want ErrThrottled (the slot is still held)", err)
	}
	if err := <-ctxErr; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("handler's context at return: %v, want DeadlineExceeded", err)
	}
	waitUntil(t, "the late answer refused", func() bool { _, ok := refusal(logs, res.RequestID); return ok })
	if err := api.WaitPolls(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`)})
	if err != nil || string(r.Body) != `"late"` {
		t.Fatalf("after the late answer: %s %v %+v", r.Body, err, r.Err)
	}
	<-ctxErr
	if st := answeredAllBut(t, api, 1); st.Late != 1 || st.Timeouts != 1 || st.Responses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime(t testing.TB) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// outageWindow measures a runtime whose polls all fail for a second: the CPU
// it burns and the warnings it writes.
type outageWindow struct {
	cpu, wall time.Duration
	warnings  int
}

const outageWarning = "polling for the next invocation failed, retrying"

func measureOutage(t *testing.T, logs *observer.ObservedLogs) outageWindow {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // past the first, short backoff steps
	cpu0, w0, start := cpuTime(t), logs.FilterMessage(outageWarning).Len(), time.Now()
	time.Sleep(time.Second)
	o := outageWindow{cpu: cpuTime(t) - cpu0, wall: time.Since(start), warnings: logs.FilterMessage(outageWarning).Len() - w0}
	t.Logf("while the Runtime API was down: %v CPU in %v (%.1f%% of one core), %d warnings",
		o.cpu, o.wall.Round(time.Millisecond), 100*o.cpu.Seconds()/o.wall.Seconds(), o.warnings)
	// Generous bounds: a spinning poller burns a whole core, and writes
	// thousands of lines.
	if o.cpu > o.wall/5 {
		t.Errorf("CPU %v in %v while the Runtime API was down: polls are spinning", o.cpu, o.wall)
	}
	// At most one a second, over however long the window really lasted.
	if o.warnings > int(o.wall/time.Second)+2 {
		t.Errorf("%d warnings in %v: not rate-limited", o.warnings, o.wall)
	}
	return o
}

// startRun runs rt until the test ends; done is closed when Run has
// returned, and *result holds what it returned.
func startRun(t *testing.T, rt *Runtime) (done <-chan struct{}, result *error) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan struct{})
	var err error
	go func() {
		err = rt.Run(ctx)
		close(ch)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ch:
			waitHandlers(t, rt)
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
	return ch, &err
}

// TestRuntimeAPIRefusedRecovers: a runtime started before its Runtime API
// listens (every dial refused) backs off without spinning, logs a few
// lines, and serves once the API is up.
func TestRuntimeAPIRefusedRecovers(t *testing.T) {
	const n = 4
	addr := freeAddr(t)
	log, logs := observe()
	e := env{"AWS_LAMBDA_RUNTIME_API": addr, "AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}
	rt, err := New(sleepy, WithLookupEnv(e.lookup), WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, rt)
	measureOutage(t, logs)

	api := newAPI(t, rapitest.Options{Addr: addr, MaxConcurrency: n, Queue: true})
	up := time.Now()
	ctx, cancel := testContext(t)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Logf("all %d slots polling %v after the API came up", n, time.Since(up).Round(time.Millisecond))
	if r := invoke(t, api, `{"Size":2}`); r.Err != nil || string(r.Body) != "xx" {
		t.Fatalf("after recovery: %s %+v", r.Body, r.Err)
	}
	waitUntil(t, "the recovery logged", func() bool { return logs.FilterMessage("polling for the next invocation works again").Len() == 1 })
	answeredOnce(t, api)
}

// TestRuntimeAPIFaultsRecover: while every /next meets a fault (reset,
// dropped connection, malformed status line or header, a peer that stalls
// mid-answer), the pollers back off without spinning; when the
// faults stop, every slot polls again and serves.
func TestRuntimeAPIFaultsRecover(t *testing.T) {
	const n = 4
	faults := []*rapitest.Fault{
		{Reset: true},
		{Drop: true},
		{Raw: []byte("HTTP/1.1 2OO OK\r\n\r\n")},
		{Raw: []byte("HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id abc\r\n\r\n")},
		{Raw: []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n")},
		{Raw: []byte("HTTP/1.1 200 OK\r\nContent-Le"), Reset: true},
		{Raw: []byte("HTTP/1.1 200 OK\r\nLambda-Runtime-Trace-Id: x\r\n"), Stall: time.Hour},
	}
	var down atomic.Bool
	down.Store(true)
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, Faults: func(call int, r *http.Request) *rapitest.Fault {
		if !down.Load() || !strings.HasSuffix(r.URL.Path, "/next") {
			return nil
		}
		return faults[call%len(faults)]
	}})
	log, logs := observe()
	e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr(), "AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}
	rt, err := New(sleepy, WithLookupEnv(e.lookup), WithLogger(log), withRAPIOptions(rapi.WithStallTimeout(150*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, rt)
	measureOutage(t, logs)
	faulted := api.Stats().Faults

	down.Store(false)
	ctx, cancel := testContext(t)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if r := invoke(t, api, fmt.Sprintf(`{"Size":%d}`, i+1)); r.Err != nil || len(r.Body) != i+1 {
				t.Errorf("after the faults: %s %+v", r.Body, r.Err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d faults injected in the first 1.3 s", faulted)
	if faulted < int64(n) {
		t.Fatalf("only %d faults injected", faulted)
	}
	answeredOnce(t, api)
}

// TestRuntimeAPIFailureEndsRun: a 500 on /next or on /response, and a 4xx
// on /next, end Run promptly with an error wrapping ErrRuntimeAPI and one
// ERROR line saying why. /next sends nothing a retry could change: a 4xx
// says that the environment's state (403) or the address (404) forbids
// polling, for good (doc.go, Failures).
func TestRuntimeAPIFailureEndsRun(t *testing.T) {
	for _, tt := range []struct {
		name string
		on   string // "next" or "response"
		code int
	}{
		{"next 500", "next", http.StatusInternalServerError},
		{"response 500", "response", http.StatusInternalServerError},
		{"next 403", "next", http.StatusForbidden},
		{"next 404", "next", http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var broken atomic.Bool
			api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true, Faults: func(_ int, r *http.Request) *rapitest.Fault {
				if broken.Load() && strings.HasSuffix(r.URL.Path, "/next") {
					return &rapitest.Fault{Status: tt.code}
				}
				return nil
			}})
			log, logs := observe()
			e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr(), "AWS_LAMBDA_MAX_CONCURRENCY": "2"}
			rt, err := New(sleepy, WithLookupEnv(e.lookup), WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			done, result := startRun(t, rt)
			ctx, cancel := testContext(t)
			defer cancel()
			if err := api.WaitPolls(ctx, 2); err != nil {
				t.Fatal(err)
			}
			req := rapitest.Request{Payload: []byte(`{}`)}
			if tt.on == "next" {
				broken.Store(true) // the poll queued behind this answer gets the code
			} else {
				req.PostFault = &rapitest.Fault{Status: tt.code}
			}
			if _, err := api.Invoke(ctx, req); err != nil {
				t.Fatal(err)
			}
			at := time.Now()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("Run goes on after a %d", tt.code)
			}
			runErr := *result
			took := time.Since(at)
			status := "status " + strconv.Itoa(tt.code)
			t.Logf("Run returned %v after the %d: %v", took.Round(time.Millisecond), tt.code, runErr)
			if !errors.Is(runErr, ErrRuntimeAPI) || !strings.Contains(runErr.Error(), status) {
				t.Fatalf("Run = %v, want ErrRuntimeAPI with the status", runErr)
			}
			if tt.code >= 500 && !errors.Is(runErr, rapi.ErrRuntimeAPI) {
				t.Fatalf("Run = %v, want rapi.ErrRuntimeAPI too", runErr)
			}
			if took > time.Second {
				t.Fatalf("Run took %v to stop", took)
			}
			errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
			if len(errs) != 1 || errs[0].Message != "runtime API failure, stopping" ||
				!strings.Contains(fmt.Sprint(errs[0].ContextMap()["error"]), status) {
				t.Fatalf("want one ERROR line saying why, got %v", errs)
			}
		})
	}
}

// TestStartExitsOneOnRuntimeAPIFailure: Start's exit status after a 500.
func TestStartExitsOneOnRuntimeAPIFailure(t *testing.T) {
	api := newAPI(t, rapitest.Options{Faults: func(int, *http.Request) *rapitest.Fault {
		return &rapitest.Fault{Status: http.StatusInternalServerError}
	}})
	log, logs := observe()
	e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr()}
	code := -1
	Start(sleepy, WithLookupEnv(e.lookup), WithLogger(log), func(o *options) { o.exit = func(c int) { code = c } })
	if code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if n := logs.FilterMessage("runtime API failure, stopping").Len(); n != 1 {
		t.Fatalf("%d lines saying why, want 1: %v", n, logs.All())
	}
}

// TestMalformedInvocations: answers to /next that the runtime cannot use
// never crash it. Without a request ID there is nothing to answer (the
// invocation ends by its deadline, its slot held until then, logged); with
// one, the invocation gets
// an /error with a clear type; either way the runtime keeps polling.
func TestMalformedInvocations(t *testing.T) {
	const n = 2
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: 300 * time.Millisecond})
	log, logs := observe()
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, sleepy, WithLogger(log),
		withRAPIOptions(rapi.WithStallTimeout(150*time.Millisecond)))
	payload := []byte(`{"Size":2,"pad":"` + strings.Repeat("p", 4000) + `"}`)
	tests := []struct {
		name     string
		req      rapitest.Request
		wantType string
	}{
		{"request ID missing", rapitest.Request{Payload: payload, Headers: map[string]string{"Lambda-Runtime-Aws-Request-Id": ""}}, rapitest.ErrorTypeTimeout},
		{"request ID not URL-safe", rapitest.Request{Payload: payload, Headers: map[string]string{"Lambda-Runtime-Aws-Request-Id": "a/../b"}}, rapitest.ErrorTypeTimeout},
		{"headers of absurd size", rapitest.Request{Payload: payload, Headers: map[string]string{"X-Absurd": strings.Repeat("a", 100<<10)}}, errTypeInvalidInvocation},
		{"too many headers", rapitest.Request{Payload: payload, Headers: manyHeaders(200)}, errTypeInvalidInvocation},
		{"absurd Content-Length", rapitest.Request{Payload: payload, Headers: map[string]string{"Content-Length": "99999999999999"}}, "Runtime.RequestTooLarge"},
		{"closed mid-body", rapitest.Request{Payload: payload, Fault: &rapitest.Fault{Cut: 600}}, errTypeTruncatedInvocation},
		// A reset may discard bytes the runtime had not read yet, the
		// request ID among them: then nothing can answer it.
		{"reset mid-body", rapitest.Request{Payload: payload, Fault: &rapitest.Fault{Cut: 600, Reset: true}}, errTypeTruncatedInvocation + "|" + rapitest.ErrorTypeTimeout},
		{"stalled mid-body", rapitest.Request{Payload: payload, Fault: &rapitest.Fault{Cut: 600, Stall: time.Hour}}, errTypeTruncatedInvocation},
		{"garbage deadline", rapitest.Request{Payload: payload, Headers: map[string]string{"Lambda-Runtime-Deadline-Ms": "-1"}}, "Runtime.InvalidDeadline"},
	}
	var timedOut int64 // only those whose request ID the runtime could not read
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := testContext(t)
			defer cancel()
			res, err := api.Invoke(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Err == nil || !slices.Contains(strings.Split(tt.wantType, "|"), res.Err.Type) {
				for _, e := range logs.All() {
					t.Logf("%s %s %v", e.Level, e.Message, e.ContextMap())
				}
				t.Fatalf("got %s %+v, want error type %s; stats %+v", res.Body, res.Err, tt.wantType, api.Stats())
			}
			if res.Err.Type == rapitest.ErrorTypeTimeout {
				if res.Delivered {
					t.Fatalf("timed out although its request ID was delivered: %+v", res)
				}
				timedOut++
			}
			if err := api.WaitPolls(ctx, n); err != nil {
				t.Fatal(err)
			}
			if r := invoke(t, api, `{"Size":4}`); r.Err != nil || string(r.Body) != "xxxx" {
				t.Fatalf("still serving: %s %+v", r.Body, r.Err)
			}
		})
	}
	if logs.FilterMessage(msgUnanswerable).Len() != 2 {
		t.Error("the unanswerable invocations were not logged once each")
	}
	answeredAllBut(t, api, timedOut)
}

func manyHeaders(k int) map[string]string {
	h := make(map[string]string, k)
	for i := range k {
		h["X-Many-"+strconv.Itoa(i)] = "v"
	}
	return h
}

// TestSIGTERMExtension: with LMIGO_SIGTERM=1 (or WithSIGTERM) the runtime
// registers an internal extension with no events before its first /next,
// and holds the extension's event poll open, as the Runtime API needs
// before it counts init complete. A refused registration is a warning.
func TestSIGTERMExtension(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  env
		opts []Option
	}{
		{"LMIGO_SIGTERM", env{"LMIGO_SIGTERM": "1"}, nil},
		{"WithSIGTERM", env{}, []Option{WithSIGTERM()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{Queue: true})
			log, logs := observe()
			serve(t, api, tt.env, sleepy, append(tt.opts, WithLogger(log))...)
			waitUntil(t, "the extension's event poll", func() bool { return api.Stats().ExtensionPolls == 1 })
			if st := api.Stats(); st.Extensions != 1 || st.ExtRefused != 0 {
				t.Fatalf("stats %+v", st)
			}
			if r := invoke(t, api, `{}`); r.Err != nil {
				t.Fatal(r.Err)
			}
			if logs.FilterLevelExact(zapcore.WarnLevel).Len() != 0 {
				t.Fatalf("warnings: %v", logs.All())
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		api := newAPI(t, rapitest.Options{Queue: true, Faults: func(_ int, r *http.Request) *rapitest.Fault {
			if strings.Contains(r.URL.Path, "/extension/") {
				return &rapitest.Fault{Status: http.StatusForbidden}
			}
			return nil
		}})
		log, logs := observe()
		serve(t, api, env{"LMIGO_SIGTERM": "on"}, sleepy, WithLogger(log))
		if r := invoke(t, api, `{}`); r.Err != nil {
			t.Fatal(r.Err)
		}
		if logs.FilterMessage("cannot register the internal extension: Lambda will not send SIGTERM").Len() != 1 {
			t.Fatalf("no warning: %v", logs.All())
		}
	})
}

// stopWithCause runs rt until api holds one of its polls, then cancels
// Run's context with cause, and fails t unless Run returns nil.
func stopWithCause(t *testing.T, api *rapitest.Server, rt *Runtime, cause error) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	wctx, wcancel := testContext(t)
	defer wcancel()
	if err := api.WaitPolls(wctx, 1); err != nil {
		cancel(err)
		<-done
		t.Fatal(err)
	}
	cancel(cause)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunLogsWhyItStopped: a clean shutdown ends with one INFO line naming
// its cause and what was left in flight.
func TestRunLogsWhyItStopped(t *testing.T) {
	api := newAPI(t, rapitest.Options{Queue: true})
	log, logs := observe()
	e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr()}
	rt, err := New(sleepy, WithLookupEnv(e.lookup), WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	stopWithCause(t, api, rt, errors.New("terminated signal received"))
	lines := logs.FilterMessage("runtime stopped").All()
	if len(lines) != 1 || lines[0].ContextMap()["cause"] != "terminated signal received" || lines[0].ContextMap()["inFlightLeft"] != int64(0) {
		t.Fatalf("stop line %v", lines)
	}
}

// TestUnanswerableHoldsSlot: an invocation handed out with a request ID
// that no URL can carry ("..", 4 KiB) cannot be answered: its slot is held
// until its deadline, as the platform holds the invocation, so that polls
// plus invocations stay within N, logged once at ERROR; then the slot
// polls again. A deadline already past holds it for maxInvocation, until
// the runtime stops.
func TestUnanswerableHoldsSlot(t *testing.T) {
	const (
		n       = 2
		timeout = 300 * time.Millisecond
	)
	past := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	tests := []struct {
		name    string
		headers map[string]string
		held    time.Duration // at least; 0: until its deadline, then polls again
	}{
		{"dot dot", map[string]string{"Lambda-Runtime-Aws-Request-Id": ".."}, 0},
		{"4 KiB", map[string]string{"Lambda-Runtime-Aws-Request-Id": strings.Repeat("a", 4<<10)}, 0},
		{"dot dot, past deadline", map[string]string{"Lambda-Runtime-Aws-Request-Id": "..", "Lambda-Runtime-Deadline-Ms": past}, maxInvocation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
			log, logs := observe()
			rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, sleepy, WithLogger(log))
			_ = rt
			ctx, cancel := testContext(t)
			defer cancel()
			res, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"Size":1}`), Timeout: timeout, Headers: tt.headers})
			if err != nil || res.Err == nil || res.Err.Type != rapitest.ErrorTypeTimeout {
				t.Fatalf("%+v, %v; want a timeout", res.Err, err)
			}
			if st := api.Stats(); st.Violations != 0 || st.MaxOutstanding > n {
				t.Fatalf("polls beyond N while the invocation lived: %+v", st)
			}
			lines := logs.FilterMessage(msgUnanswerable).All()
			if len(lines) != 1 || lines[0].Level != zapcore.ErrorLevel {
				t.Fatalf("want one ERROR line: %v", lines)
			}
			if held, _ := lines[0].ContextMap()["heldFor"].(time.Duration); held < tt.held {
				t.Errorf("held for %v, want at least %v", held, tt.held)
			}
			if tt.held == 0 {
				if err := api.WaitPolls(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			if r := invoke(t, api, `{"Size":4}`); r.Err != nil || string(r.Body) != "xxxx" {
				t.Fatalf("still serving: %s %+v", r.Body, r.Err)
			}
			if st := api.Stats(); st.Violations != 0 || st.MaxOutstanding > n {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}
