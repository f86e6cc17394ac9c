package rapitest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// notices collects what Options.Notice is told.
type notices struct {
	mu  sync.Mutex
	got []string // "what id"
}

func (n *notices) add(id, what string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, what+" "+id)
}

func (n *notices) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.got)
}

// A post whose Lambda-Runtime-Invocation-Id names another invocation is
// refused with 410 and leaves the invocation open: the post that names it
// then answers it, and Invoke gets that answer. /response and /error alike.
func TestEchoMismatchRefused(t *testing.T) {
	for _, route := range []string{"response", "error"} {
		t.Run(route, func(t *testing.T) {
			var ns notices
			s := newServer(t, Options{Notice: ns.add})
			rt := newTestRuntime(t, s)
			ctx := testCtx(t)
			next := rt.nextPending(ctx)
			done := invokeAsync(ctx, s, Request{Payload: []byte(`{"token":"a1"}`)})
			ev := recv(t, next)
			id, echo := ev.id(), ev.header.Get(hdrInvocationID)
			if ev.status != http.StatusOK || echo == "" {
				t.Fatalf("/next: status %d, invocation ID %q", ev.status, echo)
			}
			path := pathInvocation + url.PathEscape(id) + "/" + route
			hdr := map[string]string{hdrErrorType: "Soak.Error"}

			for _, wrong := range []string{"not-" + echo, strings.ToUpper(echo), ""} {
				hdr[hdrInvocationID] = wrong
				got, err := rt.do(ctx, http.MethodPost, path, hdr, []byte(`{"token":"b2"}`), false)
				if err != nil || got.status != http.StatusGone || string(got.body) != string(bodyTimeout) {
					t.Fatalf("echo %q: status %d, body %s, err %v; want 410 %s", wrong, got.status, got.body, err, bodyTimeout)
				}
			}
			if st := s.Stats(); st.CrossWired != 3 || st.Ended() != 0 || st.Outstanding != 1 || st.Late != 0 {
				t.Fatalf("after the wrong echoes: %+v", st)
			}
			select {
			case r := <-done:
				t.Fatalf("Invoke returned on a refused post: %+v", r)
			default:
			}

			hdr[hdrInvocationID] = echo
			if got, err := rt.do(ctx, http.MethodPost, path, hdr, []byte(`{"token":"a1"}`), false); err != nil || got.status != http.StatusAccepted {
				t.Fatalf("right echo: status %d, err %v", got.status, err)
			}
			r := recv(t, done)
			body := r.res.Body
			if route == "error" {
				if r.res.Err == nil || r.res.Err.Type != "Soak.Error" {
					t.Fatalf("Invoke = %+v, want the error", r.res)
				}
				body = r.res.Err.Body
			}
			if r.err != nil || string(body) != `{"token":"a1"}` || !r.res.Delivered {
				t.Fatalf("Invoke = %+v, %v; want the answer with the right echo", r.res, r.err)
			}
			st := s.Stats()
			if st.CrossWired != 3 || st.NoEcho != 0 || st.Answered() != 1 || st.Outstanding != 0 || st.BadRequests != 0 {
				t.Errorf("stats %+v", st)
			}
			if got, want := ns.list(), slices.Repeat([]string{NoticeCrossWired + " " + id}, 3); !slices.Equal(got, want) {
				t.Errorf("notices %q, want %q", got, want)
			}
		})
	}
}

// A post without the echo is accepted, as by the emulator, and counted;
// one for an invocation handed out without an ID (Request.Headers removed
// it) is neither checked nor counted.
func TestEchoAbsentAccepted(t *testing.T) {
	var ns notices
	s := newServer(t, Options{Notice: ns.add})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)

	next := rt.nextPending(ctx)
	done := invokeAsync(ctx, s, Request{Payload: []byte(`"with"`)})
	ev := recv(t, next)
	if st := rt.respond(ev.id(), ev.body); st != http.StatusAccepted {
		t.Fatalf("respond without echo: status %d", st)
	}
	if r := recv(t, done); r.err != nil || string(r.res.Body) != `"with"` {
		t.Fatalf("Invoke = %+v, %v", r.res, r.err)
	}

	next = rt.nextPending(ctx)
	done = invokeAsync(ctx, s, Request{Payload: []byte(`"without"`), Headers: map[string]string{hdrInvocationID: ""}})
	ev2 := recv(t, next)
	if ev2.header.Get(hdrInvocationID) != "" {
		t.Fatalf("invocation ID %q sent, want none", ev2.header.Get(hdrInvocationID))
	}
	path := pathInvocation + url.PathEscape(ev2.id()) + "/response"
	if st := rt.post(path, map[string]string{hdrInvocationID: "anything"}, ev2.body, false); st != http.StatusAccepted {
		t.Fatalf("respond to an invocation without ID: status %d", st)
	}
	if r := recv(t, done); r.err != nil || string(r.res.Body) != `"without"` {
		t.Fatalf("Invoke = %+v, %v", r.res, r.err)
	}

	st := s.Stats()
	if st.NoEcho != 1 || st.CrossWired != 0 || st.Responses != 2 {
		t.Errorf("stats %+v", st)
	}
	if got, want := ns.list(), []string{NoticeNoEcho + " " + ev.id()}; !slices.Equal(got, want) {
		t.Errorf("notices %q, want %q", got, want)
	}
}

// A negative Cut ends the /next reply that many bytes before its end: in
// the body, or in the header lines after the request ID, the invocation
// is delivered; cut before the request ID, it is not.
func TestCutFromEnd(t *testing.T) {
	payload := `{"token":"0123456789"}`
	tests := []struct {
		name      string
		cut       int
		delivered bool
	}{
		{"mid-body", -len(payload) / 2, true},
		{"last header line", -(len(payload) + 2 + 10), true}, // in Lambda-Runtime-Trace-Id, after the ID
		{"status line", 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, Options{})
			rc := pollRaw(t, s)
			ctx := testCtx(t)
			done := invokeAsync(ctx, s, Request{Payload: []byte(payload), Fault: &Fault{Cut: tt.cut}, Timeout: 50 * time.Millisecond})
			got, _ := rc.readRaw()
			hasID := strings.Contains(string(got), hdrRequestID+": ")
			if hasID != tt.delivered || strings.HasSuffix(string(got), payload) {
				t.Errorf("client read %q", got)
			}
			r := recv(t, done) // by its deadline: nobody answers
			if r.res.Delivered != tt.delivered || r.res.Err == nil || r.res.Err.Type != ErrorTypeTimeout {
				t.Errorf("Invoke = %+v, %v; want a timeout, delivered %v", r.res, r.err, tt.delivered)
			}
			// Over by its deadline, it is held no longer, delivered or not.
			if st := s.Stats(); st.Outstanding != 0 || st.Faults != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
