package rapitest

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// waitBound is how long a test waits for what must happen: most of the
// time left before go test's -timeout, so that a hang fails with a message.
func waitBound(t *testing.T) time.Duration {
	d, ok := t.Deadline()
	if !ok {
		return time.Hour
	}
	return time.Until(d) * 9 / 10
}

// TestInvokeUnreadNext: a runtime that sends /next and never reads the
// reply, whose payload is far beyond what the sockets buffer, does not hold
// Invoke past its context or its invocation's deadline.
func TestInvokeUnreadNext(t *testing.T) {
	payload := make([]byte, 64<<20)
	tests := []struct {
		name       string
		ctxTimeout time.Duration // 0: only the test's bound
		timeout    time.Duration // Request.Timeout
		want       func(r invokeResult) bool
		wantStats  func(st Stats) bool
	}{
		{
			name: "context deadline", ctxTimeout: 100 * time.Millisecond, timeout: time.Hour,
			want:      func(r invokeResult) bool { return errors.Is(r.err, context.DeadlineExceeded) },
			wantStats: func(st Stats) bool { return st.Canceled == 1 },
		},
		{
			name: "invocation deadline", timeout: 100 * time.Millisecond,
			want: func(r invokeResult) bool {
				return r.err == nil && r.res.Err != nil && r.res.Err.Type == ErrorTypeTimeout
			},
			wantStats: func(st Stats) bool { return st.Timeouts == 1 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, Options{})
			pollRaw(t, s) // sends GET /next and never reads
			bound := waitBound(t)
			for ctxTimeout := tt.ctxTimeout; ; ctxTimeout *= 2 {
				ctx, cancel := context.WithTimeout(context.Background(), bound)
				if ctxTimeout > 0 {
					ctx, cancel = context.WithTimeout(context.Background(), ctxTimeout)
				}
				var r invokeResult
				select {
				case r = <-invokeAsync(ctx, s, Request{Payload: payload, Timeout: tt.timeout}):
				case <-time.After(bound):
					cancel()
					t.Fatalf("Invoke still blocked after %v on a /next reply the runtime does not read", bound)
				}
				cancel()
				if r.res.RequestID == "" && errors.Is(r.err, context.DeadlineExceeded) {
					continue // the context ended before hand-out: try a longer one
				}
				if !tt.want(r) || r.res.RequestID == "" {
					t.Fatalf("Invoke = %+v, %v", r.res, r.err)
				}
				if st := s.Stats(); !tt.wantStats(st) || st.Invocations != 1 || st.Answered() != 0 {
					t.Fatalf("stats %+v", st)
				}
				return
			}
		})
	}
}

// TestDeadlineDecides: a post that the fake's clock reads at or after its
// invocation's deadline is refused 410 and the invocation ends by timeout,
// though the deadline's timer (an hour away) has not fired.
func TestDeadlineDecides(t *testing.T) {
	const timeout = time.Hour
	tests := []struct {
		name     string
		at       time.Duration // the post, by the fake's clock, after hand-out
		wantCode int
	}{
		{"before the deadline", timeout - time.Millisecond, http.StatusAccepted},
		{"at the deadline", timeout, http.StatusGone},
		{"after the deadline", timeout + time.Millisecond, http.StatusGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := time.Now()
			var elapsed atomic.Int64
			s := newServer(t, Options{now: func() time.Time { return base.Add(time.Duration(elapsed.Load())) }})
			rt := newTestRuntime(t, s)
			ctx := testCtx(t)
			polled := rt.nextPending(ctx)
			done := invokeAsync(ctx, s, Request{Payload: []byte(`{}`), Timeout: timeout})
			ev := recv(t, polled)
			elapsed.Store(int64(tt.at))
			if code := rt.respond(ev.id(), []byte(`"answer"`)); code != tt.wantCode {
				t.Errorf("post %v after hand-out: status %d, want %d", tt.at, code, tt.wantCode)
			}
			r := recv(t, done)
			st := s.Stats()
			if tt.wantCode == http.StatusAccepted {
				if r.err != nil || r.res.Err != nil || string(r.res.Body) != `"answer"` || r.res.Latency != tt.at || st.Responses != 1 {
					t.Fatalf("Invoke = %+v, %v; stats %+v; want the answer", r.res, r.err, st)
				}
				return
			}
			if r.err != nil || r.res.Err == nil || r.res.Err.Type != ErrorTypeTimeout || r.res.Latency != timeout {
				t.Errorf("Invoke = %+v, %v; want a timeout", r.res, r.err)
			}
			if st.Timeouts != 1 || st.Late != 1 || st.Answered() != 0 || st.Ended() != 1 || st.Outstanding != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
