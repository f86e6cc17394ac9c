package rapitest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// FuzzParseID checks that parseID accepts exactly what formatID makes.
func FuzzParseID(f *testing.F) {
	g := newIDs()
	f.Add(formatID(g.request, 1))
	f.Add(formatID(g.request, 1<<48-1))
	f.Add(g.request + "00000000000g")
	f.Add(g.request + "ABCDEF012345")
	f.Add("")
	f.Add("00000000-0000-4000-8000-000000000001")
	f.Fuzz(func(t *testing.T, id string) {
		seq, ok := parseID(g.request, id)
		if !ok {
			return
		}
		if back := formatID(g.request, seq); back != id {
			t.Fatalf("parseID(%q) = %d, formats back as %q", id, seq, back)
		}
	})
}

// FuzzPost posts arbitrary request IDs and bodies: nothing is accepted
// for an invocation that was never handed out, and nothing panics.
func FuzzPost(f *testing.F) {
	s, err := New(Options{MaxResponseBytes: 64})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	f.Add("x", []byte(`{}`), false)
	f.Add(formatID(s.ids.request, 1), []byte(`{"errorMessage":"m"}`), true)
	f.Add("%2F..%2F", bytes.Repeat([]byte("a"), 100), false)
	f.Add("", []byte(nil), true)
	f.Fuzz(func(t *testing.T, id string, body []byte, isError bool) {
		route := "/response"
		if isError {
			route = "/error"
		}
		r := &http.Request{
			Method:        http.MethodPost,
			URL:           &url.URL{Path: pathInvocation + id + route},
			Header:        http.Header{hdrErrorType: {"Function.X"}},
			Body:          io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)),
			Host:          s.Addr(),
		}
		w := httptest.NewRecorder()
		s.serve(w, r)
		if w.Code == http.StatusAccepted {
			t.Fatalf("POST %q: 202 for an invocation never handed out", r.URL.Path)
		}
		if st := s.Stats(); st.Ended() != 0 || st.Outstanding != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}
