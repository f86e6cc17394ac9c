package rapitest

import (
	"net/http"
	"testing"
)

// TestExtensions: internal extensions register with no events before the
// first /next, and their event poll is held open until Close.
func TestExtensions(t *testing.T) {
	s := newServer(t, Options{})
	rt := newTestRuntime(t, s)
	ctx := testCtx(t)
	register := func(name, body string) event {
		t.Helper()
		hdr := map[string]string{hdrContentType: contentTypeJSON}
		if name != "" {
			hdr[hdrExtName] = name
		}
		ev, err := rt.do(ctx, http.MethodPost, pathExtRegister, hdr, []byte(body), false)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	ev := register("lmigo", `{"events":[]}`)
	id := ev.header.Get(hdrExtID)
	if ev.status != http.StatusOK || id == "" {
		t.Fatalf("register: %d %q %s", ev.status, id, ev.body)
	}
	for _, tt := range []struct{ name, body string }{
		{"lmigo", `{"events":[]}`},           // same name
		{"other", `{"events":["SHUTDOWN"]}`}, // events, for an internal extension
		{"", `{"events":[]}`},                // no name
		{"other", `{"events":`},              // not JSON
	} {
		if ev := register(tt.name, tt.body); ev.status != http.StatusForbidden {
			t.Errorf("register %q %s: status %d, want 403", tt.name, tt.body, ev.status)
		}
	}
	if ev, _ := rt.do(ctx, http.MethodGet, pathExtEventNext, map[string]string{hdrExtID: "nope"}, nil, false); ev.status != http.StatusForbidden {
		t.Errorf("event/next with an unknown identifier: %d", ev.status)
	}
	done := make(chan event, 1)
	go func() {
		ev, _ := rt.do(ctx, http.MethodGet, pathExtEventNext, map[string]string{hdrExtID: id}, nil, false)
		done <- ev
	}()
	waitFor(t, "the event poll", func() bool { return s.Stats().ExtensionPolls == 1 })
	// Init ends with the first /next: registration closes.
	polled := rt.nextPending(ctx)
	if ev := register("late", `{"events":[]}`); ev.status != http.StatusForbidden {
		t.Errorf("register after the first /next: %d, want 403", ev.status)
	}
	select {
	case ev := <-done:
		t.Fatalf("event poll answered: %+v", ev)
	default:
	}
	s.Close()
	recv(t, polled)
	recv(t, done)
	if st := s.Stats(); st.Extensions != 1 || st.ExtensionPolls != 1 || st.ExtRefused != 6 {
		t.Errorf("stats %+v", st)
	}
}
