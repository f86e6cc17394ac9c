package rapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr bool
	}{
		{"zero", Options{}, false},
		{"full", Options{MaxConcurrency: 1600, MaxResponseBytes: 10, Queue: true, Timeout: time.Second, FunctionARN: "arn"}, false},
		{"negative concurrency", Options{MaxConcurrency: -1}, true},
		{"negative response cap", Options{MaxResponseBytes: -1}, true},
		{"negative timeout", Options{Timeout: -time.Second}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.opts)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidOptions) {
					t.Fatalf("err = %v, want ErrInvalidOptions", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
				t.Errorf("Addr() = %q, want loopback", s.Addr())
			}
		})
	}
}

func TestNextHeaders(t *testing.T) {
	// The deadline header is checked against it; the answer, a few ms
	// away, must never meet it.
	const timeout = time.Minute
	tests := []struct {
		name  string
		req   Request
		check func(t *testing.T, h http.Header)
	}{
		{
			name: "defaults",
			req:  Request{Payload: []byte(`{"a":1}`)},
			check: func(t *testing.T, h http.Header) {
				if !uuidRE.MatchString(h.Get(hdrRequestID)) {
					t.Errorf("request ID %q is not UUID-shaped", h.Get(hdrRequestID))
				}
				if !uuidRE.MatchString(h.Get(hdrInvocationID)) || h.Get(hdrInvocationID) == h.Get(hdrRequestID) {
					t.Errorf("invocation ID %q", h.Get(hdrInvocationID))
				}
				if got := h.Get(hdrFunctionARN); got != DefaultFunctionARN {
					t.Errorf("ARN = %q", got)
				}
				if got := h.Get(hdrTraceID); !regexp.MustCompile(`^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$`).MatchString(got) {
					t.Errorf("trace ID = %q", got)
				}
				for _, k := range []string{hdrClientContext, hdrCognitoIdentity, hdrTenantID} {
					if _, ok := h[k]; ok {
						t.Errorf("%s sent, want absent", k)
					}
				}
			},
		},
		{
			name: "optional headers",
			req: Request{Payload: []byte(`{}`), TraceID: "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1",
				TenantID: "tenant-1", ClientContext: `{"custom":{"k":"v"}}`, CognitoIdentity: `{"cognitoIdentityId":"id"}`},
			check: func(t *testing.T, h http.Header) {
				want := map[string]string{
					hdrTraceID:         "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1",
					hdrTenantID:        "tenant-1",
					hdrClientContext:   `{"custom":{"k":"v"}}`,
					hdrCognitoIdentity: `{"cognitoIdentityId":"id"}`,
				}
				for k, v := range want {
					if got := h.Get(k); got != v {
						t.Errorf("%s = %q, want %q", k, got, v)
					}
				}
			},
		},
		{
			name: "overrides",
			req: Request{Payload: []byte(`[]`), Headers: map[string]string{
				"lambda-runtime-deadline-ms": "soon", "X-Extra": "1", hdrTraceID: "",
			}},
			check: func(t *testing.T, h http.Header) {
				if got := h.Values(hdrDeadline); len(got) != 1 || got[0] != "soon" {
					t.Errorf("deadline = %q, want [soon]", got)
				}
				if got := h.Get("X-Extra"); got != "1" {
					t.Errorf("X-Extra = %q", got)
				}
				if _, ok := h[hdrTraceID]; ok {
					t.Error("trace ID sent, want removed")
				}
			},
		},
		{
			name: "custom request ID",
			req:  Request{Payload: []byte(`"x"`), Headers: map[string]string{hdrRequestID: "odd id/with?chars"}},
			check: func(t *testing.T, h http.Header) {
				if got := h.Get(hdrRequestID); got != "odd id/with?chars" {
					t.Errorf("request ID = %q", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, Options{Timeout: timeout})
			rt := newTestRuntime(t, s)
			ctx := testCtx(t)
			polled := rt.nextPending(ctx)
			before := time.Now()
			done := invokeAsync(ctx, s, tt.req)
			ev := recv(t, polled)
			after := time.Now()
			if ev.status != http.StatusOK {
				t.Fatalf("/next status %d", ev.status)
			}
			if !bytes.Equal(ev.body, tt.req.Payload) {
				t.Errorf("payload %q, want %q", ev.body, tt.req.Payload)
			}
			if got := ev.header.Get(hdrContentType); got != contentTypeJSON {
				t.Errorf("Content-Type = %q", got)
			}
			if got := ev.header.Get(hdrContentLength); got != strconv.Itoa(len(tt.req.Payload)) {
				t.Errorf("Content-Length = %q", got)
			}
			if _, ok := tt.req.Headers[strings.ToLower(hdrDeadline)]; !ok {
				ms, err := strconv.ParseInt(ev.header.Get(hdrDeadline), 10, 64)
				if err != nil || ms < before.Add(timeout).UnixMilli() || ms > after.Add(timeout).UnixMilli() {
					t.Errorf("deadline %q not within now + timeout", ev.header.Get(hdrDeadline))
				}
			}
			tt.check(t, ev.header)

			if st := rt.respond(ev.id(), []byte(`"ok"`)); st != http.StatusAccepted {
				t.Fatalf("respond: status %d", st)
			}
			r := recv(t, done)
			if r.err != nil || r.res.RequestID != ev.id() || string(r.res.Body) != `"ok"` || r.res.Status != http.StatusOK || r.res.Err != nil {
				t.Fatalf("Invoke = %+v, %v", r.res, r.err)
			}
		})
	}
}

func TestInvokeWithNPolls(t *testing.T) {
	const n = 4
	s := newServer(t, Options{MaxConcurrency: n})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	wait := rt.serve(ctx, n, 100, rt.echo)
	defer wait()
	defer s.Close()

	for round := range 3 {
		if err := s.WaitPolls(ctx, n); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				payload := fmt.Appendf(nil, `{"round":%d,"i":%d}`, round, i)
				res, err := s.Invoke(ctx, Request{Payload: payload})
				if err != nil || !bytes.Equal(res.Body, payload) {
					t.Errorf("Invoke = %q, %v; want %q", res.Body, err, payload)
				}
			})
		}
		wg.Wait()
	}
	st := s.Stats()
	if st.Throttles != 0 || st.Invocations != 3*n || st.Responses != 3*n || st.Violations != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestThrottle(t *testing.T) {
	s := newServer(t, Options{MaxConcurrency: 2})
	ctx := testCtx(t)
	if _, err := s.Invoke(ctx, Request{Payload: []byte(`{}`)}); !errors.Is(err, ErrThrottled) {
		t.Fatalf("Invoke with no poll: %v, want ErrThrottled", err)
	}

	// One poll pending serves one invoke; the next one is throttled.
	rt := newTestRuntime(t, s)
	polled := rt.nextPending(ctx)
	done := invokeAsync(ctx, s, Request{Payload: []byte(`1`)})
	ev := recv(t, polled)
	if _, err := s.Invoke(ctx, Request{Payload: []byte(`2`)}); !errors.Is(err, ErrThrottled) {
		t.Fatalf("Invoke with poll taken: %v, want ErrThrottled", err)
	}
	rt.respond(ev.id(), ev.body)
	if r := recv(t, done); r.err != nil {
		t.Fatal(r.err)
	}
	st := s.Stats()
	if st.Throttles != 2 || st.Invocations != 1 || st.Responses != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestQueue(t *testing.T) {
	t.Run("waits for a poll", func(t *testing.T) {
		s := newServer(t, Options{Queue: true})
		rt := newTestRuntime(t, s)
		ctx := testCtx(t)
		done := invokeAsync(ctx, s, Request{Payload: []byte(`"queued"`)})
		time.Sleep(20 * time.Millisecond) // let Invoke wait first (the test holds either way)
		select {
		case r := <-done:
			t.Fatalf("Invoke returned before any poll: %+v, %v", r.res, r.err)
		default:
		}
		wait := rt.serve(ctx, 1, 1, rt.echo)
		r := recv(t, done)
		wait()
		if r.err != nil || string(r.res.Body) != `"queued"` {
			t.Fatalf("Invoke = %+v, %v", r.res, r.err)
		}
		if st := s.Stats(); st.Throttles != 0 || st.Responses != 1 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("bounded by ctx", func(t *testing.T) {
		s := newServer(t, Options{Queue: true})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := s.Invoke(ctx, Request{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
		if st := s.Stats(); st.Invocations != 0 || st.Throttles != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// step is one post of the runtime for the invocation under test.
type step struct {
	route   string // "response", "error", "unknown"
	body    []byte
	chunked bool
	want    int
}

func TestPostStatus(t *testing.T) {
	big := func(n int) []byte { return bytes.Repeat([]byte("a"), n) }
	tests := []struct {
		name      string
		opts      Options
		steps     []step
		wantBody  []byte // nil: check wantErr
		wantErr   string
		wantStats func(Stats) bool
	}{
		{
			name:      "at cap",
			opts:      Options{MaxResponseBytes: 1000},
			steps:     []step{{route: "response", body: big(1000), want: 202}},
			wantBody:  big(1000),
			wantStats: func(s Stats) bool { return s.Responses == 1 && s.TooLarge == 0 },
		},
		{
			name:      "413 with length",
			opts:      Options{MaxResponseBytes: 1000},
			steps:     []step{{route: "response", body: big(1001), want: 413}, {route: "response", body: []byte(`1`), want: 400}},
			wantErr:   ErrorTypeTooLarge,
			wantStats: func(s Stats) bool { return s.Oversized == 1 && s.TooLarge == 1 && s.Duplicates == 1 },
		},
		{
			name:      "413 chunked",
			opts:      Options{MaxResponseBytes: 1000},
			steps:     []step{{route: "response", body: big(5000), chunked: true, want: 413}},
			wantErr:   ErrorTypeTooLarge,
			wantStats: func(s Stats) bool { return s.Oversized == 1 && s.TooLarge == 1 },
		},
		{
			name:      "chunked within cap",
			opts:      Options{MaxResponseBytes: 1000},
			steps:     []step{{route: "response", body: big(999), chunked: true, want: 202}},
			wantBody:  big(999),
			wantStats: func(s Stats) bool { return s.Responses == 1 },
		},
		{
			name:      "default cap",
			steps:     []step{{route: "response", body: big(DefaultMaxResponseBytes), want: 202}},
			wantBody:  big(DefaultMaxResponseBytes),
			wantStats: func(s Stats) bool { return s.Responses == 1 },
		},
		{
			name:      "default cap + 1",
			steps:     []step{{route: "response", body: big(DefaultMaxResponseBytes + 1), want: 413}},
			wantErr:   ErrorTypeTooLarge,
			wantStats: func(s Stats) bool { return s.Oversized == 1 },
		},
		{
			name:      "unknown ID",
			steps:     []step{{route: "unknown", body: []byte(`1`), want: 400}, {route: "response", body: []byte(`2`), want: 202}},
			wantBody:  []byte(`2`),
			wantStats: func(s Stats) bool { return s.Unknown == 1 && s.BadRequests == 1 && s.Duplicates == 0 },
		},
		{
			name:      "duplicate response",
			steps:     []step{{route: "response", body: []byte(`1`), want: 202}, {route: "response", body: []byte(`2`), want: 400}},
			wantBody:  []byte(`1`),
			wantStats: func(s Stats) bool { return s.Duplicates == 1 && s.BadRequests == 1 && s.Responses == 1 },
		},
		{
			name:      "error after response",
			steps:     []step{{route: "response", body: []byte(`1`), want: 202}, {route: "error", body: []byte(`{}`), want: 400}},
			wantBody:  []byte(`1`),
			wantStats: func(s Stats) bool { return s.Duplicates == 1 && s.Errors == 0 },
		},
		{
			name:      "error",
			steps:     []step{{route: "error", body: []byte(`{"errorMessage":"boom","errorType":"MyError"}`), want: 202}},
			wantErr:   "Function.MyError",
			wantStats: func(s Stats) bool { return s.Errors == 1 && s.Responses == 0 },
		},
		{
			name:      "error body too large keeps the invocation open",
			steps:     []step{{route: "error", body: big(MaxErrorBodyBytes + 1), want: 413}, {route: "response", body: []byte(`3`), want: 202}},
			wantBody:  []byte(`3`),
			wantStats: func(s Stats) bool { return s.TooLarge == 1 && s.Responses == 1 && s.Oversized == 0 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.opts)
			rt := newTestRuntime(t, s)
			ctx := testCtx(t)
			polled := rt.nextPending(ctx)
			done := invokeAsync(ctx, s, Request{Payload: []byte(`{}`)})
			ev := recv(t, polled)
			for i, st := range tt.steps {
				var got int
				path := pathInvocation + ev.id() + "/" + st.route
				switch st.route {
				case "unknown":
					path = pathInvocation + "00000000-0000-4000-8000-000000000000/response"
					fallthrough
				case "response":
					got = rt.post(path, map[string]string{hdrContentType: "text/plain"}, st.body, st.chunked)
				case "error":
					got = rt.post(path, map[string]string{
						hdrErrorType: tt.wantErr, hdrContentType: contentTypeJSON,
						"Lambda-Runtime-Function-XRay-Error-Cause": `{"paths":[]}`,
					}, st.body, st.chunked)
				}
				if got != st.want {
					t.Errorf("step %d (%s): status %d, want %d", i, st.route, got, st.want)
				}
			}
			r := recv(t, done)
			if r.err != nil || r.res.RequestID != ev.id() {
				t.Fatalf("Invoke = %+v, %v", r.res, r.err)
			}
			if tt.wantBody != nil {
				if r.res.Err != nil || !bytes.Equal(r.res.Body, tt.wantBody) || r.res.ContentType != "text/plain" {
					t.Errorf("Result: err %v, %d bytes, type %q; want %d bytes", r.res.Err, len(r.res.Body), r.res.ContentType, len(tt.wantBody))
				}
			} else {
				if r.res.Err == nil || r.res.Err.Type != tt.wantErr || r.res.Body != nil {
					t.Fatalf("Result %+v, want error %s", r.res, tt.wantErr)
				}
				if tt.wantErr == "Function.MyError" &&
					(string(r.res.Err.Body) != string(tt.steps[0].body) || string(r.res.Err.Cause) != `{"paths":[]}`) {
					t.Errorf("FunctionError %q cause %q", r.res.Err.Body, r.res.Err.Cause)
				}
			}
			if r.res.Latency <= 0 || r.res.Status != http.StatusOK {
				t.Errorf("Latency %v, Status %d", r.res.Latency, r.res.Status)
			}
			st := s.Stats()
			if !tt.wantStats(st) || st.Invocations != 1 || st.Answered() != 1 || st.Ended() != 1 || st.Outstanding != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestLateResponse(t *testing.T) {
	const timeout = 50 * time.Millisecond
	s := newServer(t, Options{})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	polled := rt.nextPending(ctx)
	start := time.Now()
	done := invokeAsync(ctx, s, Request{Payload: []byte(`{}`), Timeout: timeout})
	ev := recv(t, polled)
	r := recv(t, done) // the runtime has not answered: Invoke ends at the deadline
	if r.err != nil || r.res.Err == nil || r.res.Err.Type != ErrorTypeTimeout || r.res.RequestID != ev.id() {
		t.Fatalf("Invoke = %+v, %v; want a timeout", r.res, r.err)
	}
	if time.Since(start) < timeout || r.res.Latency != timeout {
		t.Errorf("returned after %v, Latency %v; want >= %v", time.Since(start), r.res.Latency, timeout)
	}
	if st := s.Stats(); st.Outstanding != 0 || st.Timeouts != 1 {
		t.Errorf("before the late post: %+v (the invocation is over: it no longer counts toward N)", st)
	}
	if st := rt.respond(ev.id(), []byte(`"late"`)); st != http.StatusGone {
		t.Errorf("late response: status %d, want 410", st)
	}
	if st := rt.respond(ev.id(), []byte(`"again"`)); st != http.StatusBadRequest {
		t.Errorf("second late response: status %d, want 400", st)
	}
	st := s.Stats()
	if st.Late != 1 || st.Duplicates != 1 || st.Answered() != 0 || st.Ended() != 1 || st.Outstanding != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestCanceledInvoke(t *testing.T) {
	s := newServer(t, Options{})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	polled := rt.nextPending(ctx)
	ictx, cancel := context.WithCancel(ctx)
	done := invokeAsync(ictx, s, Request{Payload: []byte(`{}`)})
	ev := recv(t, polled)
	cancel()
	r := recv(t, done)
	if !errors.Is(r.err, context.Canceled) || r.res.RequestID != ev.id() {
		t.Fatalf("Invoke = %+v, %v; want Canceled", r.res, r.err)
	}
	if st := rt.respond(ev.id(), []byte(`1`)); st != http.StatusBadRequest {
		t.Errorf("response after the caller left: status %d, want 400", st)
	}
	st := s.Stats()
	if st.Canceled != 1 || st.BadRequests != 1 || st.Answered() != 0 || st.Ended() != 1 || st.Outstanding != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestViolation(t *testing.T) {
	t.Run("N+1 polls", func(t *testing.T) {
		const n = 2
		s := newServer(t, Options{MaxConcurrency: n})
		rt := newTestRuntime(t, s)
		ctx := testCtx(t)
		for range n + 1 {
			rt.nextAsync(ctx)
		}
		if err := s.WaitPolls(ctx, n+1); err != nil {
			t.Fatal(err)
		}
		st := s.Stats()
		if st.Violations != 1 || st.MaxPolls != n+1 || st.MaxOutstanding != n+1 || st.PendingPolls != n+1 {
			t.Errorf("stats %+v", st)
		}
		s.Close() // answers the polls
	})
	t.Run("poll while holding N invocations", func(t *testing.T) {
		s := newServer(t, Options{MaxConcurrency: 1})
		rt := newTestRuntime(t, s)
		ctx := testCtx(t)
		polled := rt.nextPending(ctx)
		done := invokeAsync(ctx, s, Request{Payload: []byte(`{}`)})
		ev := recv(t, polled)
		second := rt.nextAsync(ctx) // the slot is still busy: a violation
		if err := s.WaitPolls(ctx, 1); err != nil {
			t.Fatal(err)
		}
		rt.respond(ev.id(), ev.body)
		if r := recv(t, done); r.err != nil {
			t.Fatal(r.err)
		}
		st := s.Stats()
		if st.Violations != 1 || st.MaxOutstanding != 2 || st.MaxPolls != 1 {
			t.Errorf("stats %+v", st)
		}
		s.Close()
		if ev := recv(t, second); ev.status != http.StatusInternalServerError {
			t.Errorf("pending poll after Close: status %d, want 500", ev.status)
		}
	})
}

func TestExactlyOnce(t *testing.T) {
	const (
		n        = 8
		total    = 2000
		invokers = 8
	)
	s := newServer(t, Options{MaxConcurrency: n, Queue: true, Timeout: 30 * time.Second}) // a loaded CI machine must not time out a queued invocation
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	wait := rt.serve(ctx, n, total, rt.echo)

	var (
		mu  sync.Mutex
		ids = make(map[string]int, total)
		wg  sync.WaitGroup
	)
	for w := range invokers {
		wg.Go(func() {
			for i := w; i < total; i += invokers {
				// Distinct payloads of varied sizes.
				payload := fmt.Appendf(nil, `{"i":%d,"pad":%q}`, i, strings.Repeat("x", i%97*13))
				res, err := s.Invoke(ctx, Request{Payload: payload})
				if err != nil || res.Err != nil || !bytes.Equal(res.Body, payload) {
					t.Errorf("invocation %d: body %q, err %v %v", i, res.Body, err, res.Err)
					return
				}
				mu.Lock()
				ids[res.RequestID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := s.WaitPolls(ctx, n); err != nil { // every slot polls again
		t.Fatal(err)
	}
	st := s.Stats()
	s.Close()
	wait()

	if len(ids) != total {
		t.Errorf("%d distinct request IDs, want %d", len(ids), total)
	}
	if st.Invocations != total || st.Responses != total || st.Answered() != total || st.Throttles != 0 ||
		st.BadRequests != 0 || st.Late != 0 || st.TooLarge != 0 || st.Violations != 0 ||
		st.MaxOutstanding > n || st.MaxPolls > n || st.Outstanding != n || st.PendingPolls != n {
		t.Errorf("stats %+v", st)
	}
	if st.NewConns > 4*n { // keep-alive: connections are reused
		t.Errorf("%d connections for %d requests", st.NewConns, 2*total)
	}
}

func TestClose(t *testing.T) {
	t.Run("pending poll gets 500", func(t *testing.T) {
		s := newServer(t, Options{MaxConcurrency: 2})
		rt := newTestRuntime(t, s)
		ctx := testCtx(t)
		polled := rt.nextPending(ctx)
		waited := make(chan error, 1)
		go func() { waited <- s.WaitPolls(ctx, 2) }()
		s.Close()
		if ev := recv(t, polled); ev.status != http.StatusInternalServerError {
			t.Errorf("/next status %d, want 500", ev.status)
		}
		if err := recv(t, waited); !errors.Is(err, ErrClosed) {
			t.Errorf("WaitPolls = %v, want ErrClosed", err)
		}
		if st := s.Stats(); st.PendingPolls != 0 || st.Outstanding != 0 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("in-flight and queued invokes", func(t *testing.T) {
		s := newServer(t, Options{Queue: true})
		rt := newTestRuntime(t, s)
		ctx := testCtx(t)
		polled := rt.nextAsync(ctx)
		inflight := invokeAsync(ctx, s, Request{Payload: []byte(`1`)})
		recv(t, polled) // handed out; the runtime never answers
		queued := invokeAsync(ctx, s, Request{Payload: []byte(`2`)})
		waitFor(t, "both invokes", func() bool { return s.Stats().Invocations == 1 })
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for name, ch := range map[string]<-chan invokeResult{"in flight": inflight, "queued": queued} {
			if r := recv(t, ch); !errors.Is(r.err, ErrClosed) {
				t.Errorf("%s Invoke: %v, want ErrClosed", name, r.err)
			}
		}
		if _, err := s.Invoke(ctx, Request{}); !errors.Is(err, ErrClosed) {
			t.Errorf("Invoke after Close: %v", err)
		}
		if err := s.WaitPolls(ctx, 0); !errors.Is(err, ErrClosed) {
			t.Errorf("WaitPolls after Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if st := s.Stats(); st.Aborted != 1 || st.Answered() != 0 || st.Ended() != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestAbandonedPollStaysRegistered(t *testing.T) {
	s := newServer(t, Options{})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	pctx, cancel := context.WithCancel(ctx)
	polled := rt.nextAsync(pctx)
	if err := s.WaitPolls(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if ev := recv(t, polled); ev.status != -1 {
		t.Fatalf("canceled /next: %+v", ev)
	}
	// As on the platform, the invocation goes to the dead poll and is lost.
	res, err := s.Invoke(ctx, Request{Payload: []byte(`{}`), Timeout: 30 * time.Millisecond})
	if err != nil || res.Err == nil || res.Err.Type != ErrorTypeTimeout {
		t.Fatalf("Invoke = %+v, %v; want a timeout", res, err)
	}
}

func TestInitError(t *testing.T) {
	s := newServer(t, Options{})
	rt := newTestRuntime(t, s)
	if _, _, ok := s.InitError(); ok {
		t.Fatal("init error before any post")
	}
	tests := []struct {
		name string
		body []byte
		want int
	}{
		{"accepted", []byte(`{"errorMessage":"no config","errorType":"Runtime.ConfigError"}`), http.StatusAccepted},
		{"too large", bytes.Repeat([]byte("a"), MaxErrorBodyBytes+1), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rt.post(pathInitError, map[string]string{hdrErrorType: "Runtime.ConfigError"}, tt.body, false); got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
	typ, body, ok := s.InitError()
	if !ok || typ != "Runtime.ConfigError" || string(body) != string(tests[0].body) {
		t.Errorf("InitError() = %q, %q, %v", typ, body, ok)
	}
	if st := s.Stats(); st.InitErrors != 1 || st.TooLarge != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestFaults(t *testing.T) {
	s := newServer(t, Options{Faults: func(call int, r *http.Request) *Fault {
		switch call {
		case 1:
			return &Fault{Status: http.StatusInternalServerError}
		case 2:
			return &Fault{Drop: true}
		}
		return nil
	}})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	if ev, err := rt.next(ctx); err != nil || ev.status != http.StatusInternalServerError {
		t.Errorf("call 1: %v, %v; want 500", ev.status, err)
	}
	if _, err := rt.do(ctx, http.MethodPost, pathInitError, nil, []byte(`{}`), false); err == nil {
		t.Error("call 2: no transport error")
	}
	polled := rt.nextPending(ctx)
	st := s.Stats()
	if st.Faults != 2 || st.Polls != 1 || st.InitErrors != 0 {
		t.Errorf("stats %+v", st)
	}
	s.Close()
	recv(t, polled)
}

// TestWaitPoll: bounded by its duration without a /next; nil as soon as
// one is pending; ErrClosed after Close.
func TestWaitPoll(t *testing.T) {
	s := newServer(t, Options{MaxConcurrency: 1})
	ctx := testCtx(t)
	start := time.Now()
	if err := s.WaitPoll(ctx, 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("no /next: %v", err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("returned after %v, before its bound", d)
	}
	rt := newTestRuntime(t, s)
	next := rt.nextAsync(ctx)
	if err := s.WaitPoll(ctx, testTimeout); err != nil {
		t.Fatalf("with a /next on its way: %v", err)
	}
	if s.Stats().PendingPolls != 1 {
		t.Fatalf("returned with %d polls pending", s.Stats().PendingPolls)
	}
	s.Close()
	if err := s.WaitPoll(ctx, testTimeout); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	<-next
}
