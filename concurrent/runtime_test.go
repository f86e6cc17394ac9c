package concurrent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// env is a test environment for limits.FromEnv.
type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

func newAPI(t *testing.T, opts rapitest.Options) *rapitest.Server {
	t.Helper()
	if opts.Timeout == 0 {
		// A test that wants a timeout sets one; the others must not meet
		// Lambda's default of 3 s on a loaded machine.
		opts.Timeout = time.Minute
	}
	api, err := rapitest.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	return api
}

// serve runs a Runtime for handler against api until the test ends, and
// waits until it has its polls outstanding.
func serve(t *testing.T, api *rapitest.Server, e env, handler any, opts ...Option) *Runtime {
	t.Helper()
	e["AWS_LAMBDA_RUNTIME_API"] = api.Addr()
	opts = append([]Option{WithLookupEnv(e.lookup), WithLogger(zap.NewNop())}, opts...)
	rt, err := New(handler, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := runUntilCleanup(t, rt)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := api.WaitPolls(wctx, rt.cfg.Slots); err != nil {
		t.Fatalf("runtime never polled %d times: %v", rt.cfg.Slots, err)
	}
	return rt
}

// withRuntime has New call f on the Runtime it built, before it returns:
// the test's own timing or fakes, in that Runtime only.
func withRuntime(f func(*Runtime)) Option {
	return func(o *options) { o.tune = append(o.tune, f) }
}

func invoke(t *testing.T, api *rapitest.Server, payload string) rapitest.Result {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(payload)})
	if err != nil {
		t.Fatalf("invoke %s: %v", payload, err)
	}
	return r
}

// testContext bounds a step that should take milliseconds by the test's
// own deadline, less a twentieth for the report, not by a guess of how
// slow a loaded machine may be.
func testContext(t testing.TB) (context.Context, context.CancelFunc) {
	if tt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := tt.Deadline(); ok {
			return context.WithDeadline(context.Background(), d.Add(-time.Until(d)/20))
		}
	}
	return context.WithTimeout(context.Background(), 10*time.Minute)
}

// invokeDistinct sends invocations 0..total-1 from the given number of
// goroutines, the i-th with the payload req(i), and fails the test on an
// answer that is not want(i).
func invokeDistinct(t *testing.T, api *rapitest.Server, total, goroutines int, req func(i int) (payload, want []byte)) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < total; i = int(next.Add(1) - 1) {
				payload, want := req(i)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				r, err := api.Invoke(ctx, rapitest.Request{Payload: payload})
				cancel()
				if err == nil && (r.Err != nil || !bytes.Equal(r.Body, want)) {
					err = fmt.Errorf("got %.60q (error %v), want %.60q", r.Body, r.Err, want)
				}
				if err != nil {
					errs <- fmt.Errorf("invocation %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// inflight counts handler executions that overlap.
type inflight struct{ cur, max atomic.Int64 }

func (f *inflight) enter() {
	n := f.cur.Add(1)
	for {
		m := f.max.Load()
		if n <= m || f.max.CompareAndSwap(m, n) {
			return
		}
	}
}
func (f *inflight) exit() { f.cur.Add(-1) }

// TestDistinctPayloadsAnsweredExactlyOnce: N=16, 10,000 invocations with
// distinct payloads, each response byte for byte what its request asked
// for, never more than N polls plus invocations in flight.
func TestDistinctPayloadsAnsweredExactlyOnce(t *testing.T) {
	const n, total = 16, 10000
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: 30 * time.Second})
	var live inflight
	// The response is derived from the request so a mix-up shows: the
	// payload reversed, then its length.
	handler := RawHandler(func(_ context.Context, payload []byte, out *Buffer) error {
		live.enter()
		defer live.exit()
		for i := len(payload) - 1; i >= 0; i-- {
			_ = out.WriteByte(payload[i])
		}
		_, _ = out.WriteString(":" + strconv.Itoa(len(payload)))
		return nil
	})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, handler)

	invokeDistinct(t, api, total, 2*n, func(i int) (req, want []byte) {
		// Distinct and of varying size (up to a few KiB).
		req = []byte(fmt.Sprintf("req-%d-%s", i, strings.Repeat("ab", i%2000)))
		want = make([]byte, 0, len(req)+8)
		for j := len(req) - 1; j >= 0; j-- {
			want = append(want, req[j])
		}
		return req, append(want, ":"+strconv.Itoa(len(req))...)
	})
	st := api.Stats()
	if st.Invocations != total || st.Responses != total || st.Ended() != total {
		t.Fatalf("invocations %d, responses %d, ended %d; want %d each", st.Invocations, st.Responses, st.Ended(), total)
	}
	if st.Errors+st.Duplicates+st.Unknown+st.BadRequests+st.Late+st.TooLarge != 0 {
		t.Fatalf("unexpected answers: %+v", st)
	}
	if st.MaxOutstanding > n || st.Violations != 0 {
		t.Fatalf("max polls+in flight %d (violations %d), limit %d", st.MaxOutstanding, st.Violations, n)
	}
	if st.NewConns > n+1 { // one per slot, plus the test's own client
		t.Fatalf("%d TCP connections for %d slots: connections are not kept alive", st.NewConns, n)
	}
	t.Logf("max overlapping handlers %d, connections %d", live.max.Load(), st.NewConns)
}

// TestOneAtATimeWithoutMaxConcurrency: unset AWS_LAMBDA_MAX_CONCURRENCY
// makes an ordinary runtime: one poll, one invocation at a time.
func TestOneAtATimeWithoutMaxConcurrency(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	var live inflight
	var traceEnv atomic.Value
	rt := serve(t, api, env{}, func(ctx context.Context, ev map[string]int) (map[string]int, error) {
		live.enter()
		defer live.exit()
		traceEnv.Store(os.Getenv("_X_AMZN_TRACE_ID"))
		time.Sleep(time.Millisecond)
		return map[string]int{"got": ev["n"]}, nil
	})
	if rt.cfg.MaxConcurrency != 1 || rt.cfg.Slots != 1 {
		t.Fatalf("MaxConcurrency %d, Slots %d; want 1, 1", rt.cfg.MaxConcurrency, rt.cfg.Slots)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := invoke(t, api, fmt.Sprintf(`{"n":%d}`, i))
			if want := fmt.Sprintf(`{"got":%d}`, i); string(r.Body) != want {
				t.Errorf("got %s, want %s", r.Body, want)
			}
		})
	}
	wg.Wait()
	if m := live.max.Load(); m != 1 {
		t.Fatalf("%d handlers overlapped with no AWS_LAMBDA_MAX_CONCURRENCY", m)
	}
	if st := api.Stats(); st.MaxPolls != 1 || st.MaxOutstanding != 1 {
		t.Fatalf("max polls %d, max outstanding %d; want 1", st.MaxPolls, st.MaxOutstanding)
	}
	// One at a time, the process-wide trace variable is meaningful and set.
	if v, _ := traceEnv.Load().(string); v == "" {
		t.Fatal("_X_AMZN_TRACE_ID not set for a one-at-a-time runtime")
	}
	_ = os.Unsetenv("_X_AMZN_TRACE_ID")
}

// TestFailuresStayLocal: of 8 concurrent invocations one panics and one
// returns an error; those two get function errors, the others their
// responses, and the runtime goes on serving.
func TestFailuresStayLocal(t *testing.T) {
	const n = 8
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	// A gate per wave: the race detector does not see the order the
	// Runtime API's answers give the waves (it goes through sockets), so a
	// gate used again would be a race in its eyes.
	var gates [2]sync.WaitGroup
	gates[0].Add(n)
	gates[1].Add(n)
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, func(ctx context.Context, ev struct{ I int }) (int, error) {
		gate := &gates[ev.I/100]
		gate.Done()
		gate.Wait() // all 8 in flight at once
		switch ev.I {
		case 3:
			panic(fmt.Sprintf("boom %d", ev.I))
		case 5:
			return 0, errors.New("failed on purpose")
		}
		return ev.I * 10, nil
	})
	results := make([]rapitest.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i] = invoke(t, api, fmt.Sprintf(`{"I":%d}`, i)) })
	}
	wg.Wait()
	for i, r := range results {
		switch i {
		case 3:
			var body struct {
				Message string `json:"errorMessage"`
				Type    string `json:"errorType"`
				Stack   []any  `json:"stackTrace"`
			}
			if r.Err == nil || json.Unmarshal(r.Err.Body, &body) != nil || body.Message != "boom 3" || body.Type != "string" || len(body.Stack) == 0 {
				t.Fatalf("panic: got %+v", r.Err)
			}
		case 5:
			if r.Err == nil || r.Err.Type != "errorString" || !strings.Contains(string(r.Err.Body), "failed on purpose") {
				t.Fatalf("error: got %+v", r.Err)
			}
		default:
			if r.Err != nil || string(r.Body) != strconv.Itoa(i*10) {
				t.Fatalf("invocation %d: got %s %+v", i, r.Body, r.Err)
			}
		}
	}
	// Still serving after the panic.
	for i := range n {
		wg.Go(func() {
			if r := invoke(t, api, fmt.Sprintf(`{"I":%d}`, 100+i)); string(r.Body) != strconv.Itoa((100+i)*10) {
				t.Errorf("after the panic: got %s %+v", r.Body, r.Err)
			}
		})
	}
	wg.Wait()
}

// TestInvocationContext: the handler's context carries the deadline, the
// lambdacontext, trace and tenant IDs; _X_AMZN_TRACE_ID stays unset when
// N > 1.
func TestInvocationContext(t *testing.T) {
	_ = os.Unsetenv("_X_AMZN_TRACE_ID")
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true, FunctionARN: "arn:aws:lambda:us-east-1:123456789012:function:f"})
	type seen struct {
		RequestID, ARN, Trace, Tenant, EnvTrace, LogReq string
		HasDeadline                                     bool
		Left                                            time.Duration
		Identity                                        lambdacontext.CognitoIdentity
		ClientApp                                       string
	}
	got := make(chan seen, 1)
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"}, func(ctx context.Context) error {
		lc, _ := lambdacontext.FromContext(ctx)
		d, ok := ctx.Deadline()
		got <- seen{
			RequestID: lc.AwsRequestID, ARN: lc.InvokedFunctionArn, Trace: TraceID(ctx), Tenant: TenantID(ctx),
			EnvTrace: os.Getenv("_X_AMZN_TRACE_ID"), LogReq: RequestID(ctx), HasDeadline: ok, Left: time.Until(d),
			Identity: lc.Identity, ClientApp: lc.ClientContext.Client.AppTitle,
		}
		return nil
	})
	ctx, cancel := testContext(t)
	defer cancel()
	r, err := api.Invoke(ctx, rapitest.Request{
		Payload: []byte(`{}`), Timeout: 5 * time.Second,
		TraceID: "Root=1-abc;Parent=def;Sampled=1", TenantID: "tenant-7",
		CognitoIdentity: `{"cognitoIdentityId":"id-1","cognitoIdentityPoolId":"pool-1"}`,
		ClientContext:   `{"Client":{"app_title":"app"}}`,
	})
	if err != nil || r.Err != nil {
		t.Fatalf("invoke: %v %+v", err, r.Err)
	}
	s := <-got
	if s.RequestID != r.RequestID || s.LogReq != r.RequestID {
		t.Fatalf("request ID %q / %q, want %q", s.RequestID, s.LogReq, r.RequestID)
	}
	if s.ARN != "arn:aws:lambda:us-east-1:123456789012:function:f" || s.Trace != "Root=1-abc;Parent=def;Sampled=1" || s.Tenant != "tenant-7" {
		t.Fatalf("context: %+v", s)
	}
	if !s.HasDeadline || s.Left <= 3*time.Second || s.Left > 5*time.Second {
		t.Fatalf("deadline: has %v, %v left; want about 5s", s.HasDeadline, s.Left)
	}
	if s.Identity.CognitoIdentityID != "id-1" || s.Identity.CognitoIdentityPoolID != "pool-1" || s.ClientApp != "app" {
		t.Fatalf("identity %+v, client app %q", s.Identity, s.ClientApp)
	}
	if s.EnvTrace != "" {
		t.Fatalf("_X_AMZN_TRACE_ID = %q with N > 1", s.EnvTrace)
	}
}

// TestDeadlineCancelsContext: the handler's context is done at the deadline.
func TestDeadlineCancelsContext(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{}, func(ctx context.Context) (string, error) {
		select {
		case <-ctx.Done():
			return ctx.Err().Error(), nil
		case <-time.After(10 * time.Second):
			return "not cancelled", nil
		}
	})
	ctx, cancel := testContext(t)
	defer cancel()
	r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`), Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The response races the fake's own timeout; either way the handler saw
	// its context end, never the 10 s fallback.
	if r.Err != nil && r.Err.Type != rapitest.ErrorTypeTimeout {
		t.Fatalf("got %+v", r.Err)
	}
	if r.Err == nil && string(r.Body) != `"context deadline exceeded"` {
		t.Fatalf("got %s", r.Body)
	}
}

// TestRuntimeDetectedErrors: bad invocation headers and oversized
// responses end only their invocation, with a clear error type.
func TestRuntimeDetectedErrors(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2", "LMIGO_MAX_RESPONSE_BYTES": "1KiB"},
		RawHandler(func(_ context.Context, payload []byte, out *Buffer) error {
			n, _ := strconv.Atoi(string(payload))
			_, _ = out.Write(bytes.Repeat([]byte("x"), n))
			return nil
		}))
	tests := []struct {
		name     string
		req      rapitest.Request
		wantType string
	}{
		{"response too large", rapitest.Request{Payload: []byte("1025")}, "Function.ResponseSizeTooLarge"},
		{"garbage deadline", rapitest.Request{Payload: []byte("1"), Headers: map[string]string{"Lambda-Runtime-Deadline-Ms": "soon"}}, "Runtime.InvalidDeadline"},
		{"missing deadline", rapitest.Request{Payload: []byte("1"), Headers: map[string]string{"Lambda-Runtime-Deadline-Ms": ""}}, "Runtime.InvalidDeadline"},
		{"client context not JSON", rapitest.Request{Payload: []byte("1"), ClientContext: "{nope"}, "Runtime.InvalidClientContext"},
		{"identity not JSON", rapitest.Request{Payload: []byte("1"), CognitoIdentity: "[1,"}, "Runtime.InvalidCognitoIdentity"},
		{"still serving", rapitest.Request{Payload: []byte("1024")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := testContext(t)
			defer cancel()
			r, err := api.Invoke(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantType == "" {
				if r.Err != nil || len(r.Body) != 1024 {
					t.Fatalf("got %d bytes, %+v", len(r.Body), r.Err)
				}
				return
			}
			if r.Err == nil || r.Err.Type != tt.wantType {
				t.Fatalf("got %+v, want error type %s", r.Err, tt.wantType)
			}
			var body struct{ ErrorMessage, ErrorType string }
			if err := json.Unmarshal(r.Err.Body, &body); err != nil || body.ErrorType != tt.wantType || body.ErrorMessage == "" {
				t.Fatalf("error body %s (%v)", r.Err.Body, err)
			}
		})
	}
}

// TestBadConfigPostsInitError: every bad variable named in one
// /runtime/init/error, exit status 1.
func TestBadConfigPostsInitError(t *testing.T) {
	api := newAPI(t, rapitest.Options{})
	e := env{
		"AWS_LAMBDA_RUNTIME_API":     api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY": "lots",
		"LMIGO_BUFFER_RETAIN_BYTES":  "-5",
	}
	core, logs := observer.New(zap.DebugLevel)
	code := start(func() {}, WithLookupEnv(e.lookup), WithLogger(zap.New(core)))
	if code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	typ, body, ok := api.InitError()
	if !ok || typ != "Runtime.InvalidConfiguration" {
		t.Fatalf("init error %q %s (posted %v)", typ, body, ok)
	}
	for _, name := range []string{"AWS_LAMBDA_MAX_CONCURRENCY", "lots", "LMIGO_BUFFER_RETAIN_BYTES", "-5"} {
		if !bytes.Contains(body, []byte(name)) {
			t.Errorf("init error %s does not name %s", body, name)
		}
	}
	if logs.FilterMessage("init failed").Len() != 1 {
		t.Errorf("want one log line for the failed init, got %v", logs.All())
	}
	if api.Stats().Polls != 0 {
		t.Error("polled after a failed init")
	}
}

func TestInvalidHandler(t *testing.T) {
	_, err := New(func(a, b, c int) {}, WithLookupEnv(env{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:1"}.lookup))
	if !errors.Is(err, ErrInvalidHandler) {
		t.Fatalf("err = %v, want ErrInvalidHandler", err)
	}
}

// TestShutdownWaitsForInFlight: cancelling Run lets an invocation in
// flight finish and post its answer.
func TestShutdownWaitsForInFlight(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	started := make(chan struct{})
	e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr(), "LMIGO_SHUTDOWN_TIMEOUT": "2s"}
	rt, err := New(func() (string, error) {
		close(started)
		time.Sleep(100 * time.Millisecond)
		return "done", nil
	}, WithLookupEnv(e.lookup), WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	res := make(chan rapitest.Result, 1)
	go func() { res <- invoke(t, api, `{}`) }()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r := <-res; r.Err != nil || string(r.Body) != `"done"` {
		t.Fatalf("in-flight invocation got %s %+v", r.Body, r.Err)
	}
}

// TestGoexitAndEndlessReaderStayLocal: a handler that calls
// runtime.Goexit, and one that returns a reader that never ends, each get
// a function error; neither loses its slot nor grows memory without bound.
// The reader is streamed (LMIGO_MAX_RESPONSE_BYTES does not bound it) until
// the Runtime API's own limit ends it.
func TestGoexitAndEndlessReaderStayLocal(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true, Timeout: 30 * time.Second})
	serve(t, api, env{"LMIGO_MAX_RESPONSE_BYTES": "64KiB"}, func(ev struct{ Mode string }) (io.Reader, error) {
		switch ev.Mode {
		case "goexit":
			runtime.Goexit()
		case "endless":
			return endless{}, nil
		}
		return strings.NewReader("fine"), nil
	})
	for _, tt := range []struct{ payload, wantType string }{
		{`{"Mode":"goexit"}`, "Runtime.HandlerExited"},
		{`{"Mode":"endless"}`, "Function.ResponseSizeTooLarge"},
		{`{"Mode":"goexit"}`, "Runtime.HandlerExited"},
		{`{}`, ""},
	} {
		r := invoke(t, api, tt.payload)
		if tt.wantType == "" {
			if r.Err != nil || string(r.Body) != "fine" {
				t.Fatalf("%s: got %s %+v", tt.payload, r.Body, r.Err)
			}
			continue
		}
		if r.Err == nil || r.Err.Type != tt.wantType {
			t.Fatalf("%s: got %+v, want %s", tt.payload, r.Err, tt.wantType)
		}
	}
}

// endless is a reader that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestOversizedRequestFailsOnlyItsInvocation: a payload above
// LMIGO_MAX_REQUEST_BYTES is never handed to the handler; that invocation
// gets Runtime.RequestTooLarge and the next one is served.
func TestOversizedRequestFailsOnlyItsInvocation(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	var calls atomic.Int64
	serve(t, api, env{"LMIGO_MAX_REQUEST_BYTES": "1KiB"}, RawHandler(func(_ context.Context, payload []byte, out *Buffer) error {
		calls.Add(1)
		_, _ = out.Write(payload)
		return nil
	}))
	big := `"` + strings.Repeat("x", 2048) + `"`
	if r := invoke(t, api, big); r.Err == nil || r.Err.Type != "Runtime.RequestTooLarge" {
		t.Fatalf("oversized request: got %+v", r.Err)
	}
	if r := invoke(t, api, `"small"`); r.Err != nil || string(r.Body) != `"small"` {
		t.Fatalf("next invocation: got %s %+v", r.Body, r.Err)
	}
	if calls.Load() != 1 {
		t.Fatalf("handler called %d times, want 1", calls.Load())
	}
}

// TestInvocationStaysOnItsSlot: an invocation never changes goroutine on
// its way. Each slot's connection is read and written by one goroutine
// only (its poll, its answer, the poll queued behind it, the reply read
// with the next invocation), and every handler runs on one of those.
func TestInvocationStaysOnItsSlot(t *testing.T) {
	const n, total = 3, 60
	var mu sync.Mutex
	conns := map[*goroutineConn]bool{}
	handlers := map[uint64]bool{}
	dial := func(o *rapi.Options) {
		o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			c := &goroutineConn{Conn: nc, mu: &mu, touched: map[uint64]bool{}}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			return c, nil
		}
	}
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, RawHandler(func(_ context.Context, p []byte, out *Buffer) error {
		mu.Lock()
		handlers[goroutineID()] = true
		mu.Unlock()
		out.B = append(out.B, p...)
		return nil
	}), withRAPIOptions(dial))
	invokeDistinct(t, api, total, n, func(i int) (payload, want []byte) {
		b := []byte(strconv.Itoa(i))
		return b, b
	})

	mu.Lock()
	defer mu.Unlock()
	slots := map[uint64]bool{}
	for c := range conns {
		if len(c.touched) > 1 {
			t.Errorf("a connection was used by %d goroutines, want 1", len(c.touched))
		}
		for id := range c.touched {
			slots[id] = true
		}
	}
	for id := range handlers {
		if !slots[id] {
			t.Errorf("a handler ran on goroutine %d, which used no connection", id)
		}
	}
	if len(handlers) == 0 || len(handlers) > n {
		t.Errorf("handlers ran on %d goroutines, want 1 to %d", len(handlers), n)
	}
	answeredOnce(t, api)
}

// goroutineConn records which goroutines read from and write to it.
type goroutineConn struct {
	net.Conn
	mu      *sync.Mutex
	touched map[uint64]bool
}

func (c *goroutineConn) touch() {
	id := goroutineID()
	c.mu.Lock()
	c.touched[id] = true
	c.mu.Unlock()
}

func (c *goroutineConn) Read(p []byte) (int, error) {
	c.touch()
	return c.Conn.Read(p)
}

func (c *goroutineConn) Write(p []byte) (int, error) {
	c.touch()
	return c.Conn.Write(p)
}

// peer is a Runtime API that allocates nothing per invocation, so that
// what a process-wide count of allocations sees per invocation is the
// runtime's own (norace_test.go, BenchmarkInvocation). It speaks just
// enough HTTP/1.1 for rapi: GET /next, and POSTs with a Content-Length.
// Each invocation is handed out when the test asks for it (give), and the
// test hears when its answer has been read (answered).
type peer struct {
	ln       net.Listener
	payload  []byte
	give     chan struct{}
	answered chan struct{}
	quit     chan struct{}
	timeout  *time.Timer
	wg       sync.WaitGroup

	mu       sync.Mutex
	lastBody []byte // the last answer's body, for the test to check
	lastPath []byte
	err      error // the first protocol error
}

func newPeer(t testing.TB, payload []byte) *peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{
		ln: ln, payload: payload,
		give: make(chan struct{}), answered: make(chan struct{}), quit: make(chan struct{}),
		timeout:  time.NewTimer(time.Hour),
		lastBody: make([]byte, 0, 64<<10), lastPath: make([]byte, 0, 256),
	}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		close(p.quit)
		_ = ln.Close()
		p.wg.Wait()
		if err := p.failure(); err != nil {
			t.Errorf("peer: %v", err)
		}
	})
	return p
}

func (p *peer) addr() string { return p.ln.Addr().String() }

func (p *peer) accept() {
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.serveConn(nc) })
	}
}

func (p *peer) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *peer) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// last returns copies of the last answer's path and body.
func (p *peer) last() (path, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.lastPath), string(p.lastBody)
}

// invoke hands out one invocation and waits until its answer is read. It
// allocates nothing itself (one timer, reset). Not for concurrent use.
func (p *peer) invoke(t testing.TB) {
	p.timeout.Reset(10 * time.Second)
	defer p.timeout.Stop()
	select {
	case p.give <- struct{}{}:
	case <-p.timeout.C:
		t.Fatal("peer: no /next pending")
	}
	select {
	case <-p.answered:
	case <-p.timeout.C:
		t.Fatal("peer: no answer")
	}
}

var (
	peerNextPath = []byte("/2018-06-01/runtime/invocation/next")
	peerAccepted = []byte("HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"status\":\"OK\"}\n")
)

// serveConn answers one connection; everything it needs is allocated once.
func (p *peer) serveConn(nc net.Conn) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	deadline := strconv.AppendInt(nil, time.Now().Add(time.Hour).UnixMilli(), 10)
	const idDigits = 12
	var (
		head  = make([]byte, 0, 1024)
		reqID = []byte("8476a536-e9f4-11e8-9739-000000000000")
		seq   int64
		path  = make([]byte, 0, 256)
	)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return // the runtime closed the connection
		}
		method, rest, _ := bytes.Cut(line, []byte(" "))
		target, _, _ := bytes.Cut(rest, []byte(" "))
		path = append(path[:0], target...)
		get := string(method) == "GET"
		length := 0
		for {
			h, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(h) <= 2 {
				break
			}
			if name, v, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
				length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			}
		}
		if get {
			if !bytes.Equal(path, peerNextPath) {
				p.fail(errors.New("GET of " + string(path)))
				return
			}
			select {
			case <-p.give:
			case <-p.quit:
				return
			}
			seq++
			for i, v := 0, seq; i < idDigits; i, v = i+1, v/10 {
				reqID[len(reqID)-1-i] = byte('0' + v%10)
			}
			head = append(head[:0], "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nLambda-Runtime-Aws-Request-Id: "...)
			head = append(head, reqID...)
			head = append(head, "\r\nLambda-Runtime-Deadline-Ms: "...)
			head = append(head, deadline...)
			head = append(head, "\r\nLambda-Runtime-Invoked-Function-Arn: arn:aws:lambda:us-east-1:123456789012:function:peer"+
				"\r\nLambda-Runtime-Trace-Id: Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"+
				"\r\nLambda-Runtime-Invocation-Id: 5f8a1c3e-8d2b-4b7e-9a61-0c4f2e7d9b13"+
				"\r\nContent-Length: "...)
			head = strconv.AppendInt(head, int64(len(p.payload)), 10)
			head = append(head, "\r\n\r\n"...)
			head = append(head, p.payload...)
			if _, err := nc.Write(head); err != nil {
				return
			}
			continue
		}
		p.mu.Lock()
		p.lastPath = append(p.lastPath[:0], path...)
		p.lastBody = p.lastBody[:0]
		for length > 0 {
			chunk, err := br.Peek(min(length, br.Size()))
			if err != nil && len(chunk) == 0 {
				p.mu.Unlock()
				return
			}
			if len(p.lastBody)+len(chunk) <= cap(p.lastBody) {
				p.lastBody = append(p.lastBody, chunk...)
			}
			_, _ = br.Discard(len(chunk))
			length -= len(chunk)
		}
		p.mu.Unlock()
		if _, err := nc.Write(peerAccepted); err != nil {
			return
		}
		select {
		case p.answered <- struct{}{}:
		case <-p.quit:
			return
		}
	}
}

// runPeer runs a Runtime for handler with n slots against p until the
// test ends, with the profiler labels off: the hot path's gates measure it
// with everything off. vars, if any, are set on top. It logs in the
// default format and level, to nowhere.
func runPeer(t testing.TB, p *peer, n int, handler any, vars env, opts ...Option) *Runtime {
	t.Helper()
	e := env{"AWS_LAMBDA_RUNTIME_API": p.addr(), "AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n), "LMIGO_LABELS": "off"}
	maps.Copy(e, vars)
	log := newLogger(limits.FormatJSON, limits.LevelInfo, zapDiscard{})
	opts = append([]Option{WithLookupEnv(e.lookup), WithLogger(log)}, opts...)
	rt, err := New(handler, opts...)
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, rt)
	return rt
}

// runUntilCleanup runs rt until the test ends, and checks that Run then
// returns nil. It returns Run's context.
func runUntilCleanup(t testing.TB, rt *Runtime) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
			return
		}
		waitHandlers(t, rt)
	})
	return ctx
}

// waitHandlers fails the test if a handler still runs 10 s after Run
// returned (Run does not wait past its shutdown budget): one that outlived
// its test could touch the next test's state.
func waitHandlers(t testing.TB, rt *Runtime) {
	t.Helper()
	if rt.workers == nil {
		return
	}
	if err := rt.workers.Release(10 * time.Second); err != nil {
		t.Errorf("a handler outlived its runtime: %v", err)
	}
}

// zapDiscard is a WriteSyncer to nowhere.
type zapDiscard struct{}

func (zapDiscard) Write(b []byte) (int, error) { return len(b), nil }
func (zapDiscard) Sync() error                 { return nil }

// tinyRaw answers a tiny response from the slot's buffer.
var tinyRaw = RawHandler(func(_ context.Context, _ []byte, out *Buffer) error {
	out.B = append(out.B, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`...)
	return nil
})

// BenchmarkInvocation: one tiny invocation through the whole runtime
// (poll, context, handler, answer, buffers back) against a peer
// that allocates nothing, so allocs/op are the runtime's own (and, for
// demo, the adapter's and the demo handler's). The round trip is one
// invocation at a time, so ns/op is latency, loopback included.
func BenchmarkInvocation(b *testing.B) {
	for _, bc := range []struct {
		name    string
		n       int
		handler any
		vars    env
	}{
		{"handler=raw/n=2", 2, tinyRaw, nil},
		{"handler=raw/n=1", 1, tinyRaw, nil},
		{"handler=demo/n=2", 2, demo.Handle, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newPeer(b, []byte(`{}`))
			runPeer(b, p, bc.n, bc.handler, bc.vars)
			p.invoke(b)
			b.ReportAllocs()
			for b.Loop() {
				p.invoke(b)
			}
		})
	}
}
