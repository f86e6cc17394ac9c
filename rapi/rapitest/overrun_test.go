package rapitest

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestTimedOutInvocationFreesItsSlot: as on the platform, an invocation
// whose deadline has passed no longer counts toward N, so that a poll made
// in its place (a runtime that replaced a slot whose handler overran) is
// no violation; the late post for it still gets 410. The deadline decides,
// by the fake's clock, even before the timer that ends Invoke has fired.
func TestTimedOutInvocationFreesItsSlot(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		clock   bool // the fake's clock passes the deadline; the timer is an hour away
	}{
		{"by the clock", time.Hour, true},
		{"by the timer", 20 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := time.Now()
			var elapsed atomic.Int64
			opts := Options{MaxConcurrency: 1}
			if tt.clock {
				opts.now = func() time.Time { return base.Add(time.Duration(elapsed.Load())) }
			}
			s := newServer(t, opts)
			rt := newTestRuntime(t, s)
			ctx := testCtx(t)
			polled := rt.nextPending(ctx)
			hung := invokeAsync(ctx, s, Request{Payload: []byte(`{}`), Timeout: tt.timeout})
			ev := recv(t, polled)
			if tt.clock {
				elapsed.Store(int64(tt.timeout + time.Millisecond))
			} else if r := recv(t, hung); r.res.Err == nil || r.res.Err.Type != ErrorTypeTimeout {
				t.Fatalf("Invoke = %+v, %v; want a timeout", r.res, r.err)
			}
			// The replacement's poll, while the first invocation is unanswered.
			polled = rt.nextPending(ctx)
			if st := s.Stats(); st.Violations != 0 || st.MaxOutstanding != 1 || st.Outstanding != 1 {
				t.Fatalf("a poll in place of a timed-out invocation: stats %+v, want no violation and 1 outstanding", st)
			}
			if tt.clock {
				if r := recv(t, hung); r.res.Err == nil || r.res.Err.Type != ErrorTypeTimeout {
					t.Fatalf("Invoke = %+v, %v; want a timeout", r.res, r.err)
				}
			}
			if code := rt.respond(ev.id(), []byte(`"late"`)); code != http.StatusGone {
				t.Fatalf("late post: status %d, want 410", code)
			}
			done := invokeAsync(ctx, s, Request{Payload: []byte(`{}`), Timeout: time.Hour})
			rt.echo(recv(t, polled))
			if r := recv(t, done); r.err != nil || r.res.Err != nil {
				t.Fatalf("the next invocation: %+v, %v", r.res, r.err)
			}
			st := s.Stats()
			if st.Violations != 0 || st.Timeouts != 1 || st.Late != 1 || st.Responses != 1 || st.Outstanding != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestPollBeyondNForLiveInvocation: a poll beyond N while the invocation
// the runtime holds is still live (its deadline ahead) is a violation.
func TestPollBeyondNForLiveInvocation(t *testing.T) {
	s := newServer(t, Options{MaxConcurrency: 1})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	polled := rt.nextPending(ctx)
	done := invokeAsync(ctx, s, Request{Payload: []byte(`{}`), Timeout: time.Hour})
	ev := recv(t, polled)
	extra := rt.nextPending(ctx)
	if st := s.Stats(); st.Violations != 1 || st.MaxOutstanding != 2 {
		t.Fatalf("a poll beyond N for a live invocation: stats %+v, want 1 violation", st)
	}
	rt.echo(ev)
	if r := recv(t, done); r.err != nil || r.res.Err != nil {
		t.Fatalf("Invoke = %+v, %v", r.res, r.err)
	}
	_ = s.Close()
	recv(t, extra)
}
