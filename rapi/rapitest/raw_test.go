package rapitest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// rawConn is one hand-driven HTTP/1.1 connection to the fake.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, s *Server) *rawConn {
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(testTimeout))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) write(s string) {
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawConn) read() (*http.Response, []byte) {
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		rc.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatal(err)
	}
	return resp, b
}

const rawNext = "GET " + pathNext + " HTTP/1.1\r\nHost: fake\r\n\r\n"

// pollRaw dials a raw connection, sends /next on it and returns once the
// server holds it pending.
func pollRaw(t *testing.T, s *Server) *rawConn {
	t.Helper()
	rc := dialRaw(t, s)
	rc.write(rawNext)
	if err := s.WaitPolls(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	return rc
}

// A runtime may queue its next /next behind its /response on the same
// connection: the slot is free once the response is accepted, so this is
// no violation, and the poll is pending at once.
func TestPipelinedPoll(t *testing.T) {
	s := newServer(t, Options{MaxConcurrency: 1})
	ctx := testCtx(t)
	rc := pollRaw(t, s)
	done := invokeAsync(ctx, s, Request{Payload: []byte(`"ping"`)})
	resp, payload := rc.read()
	id := resp.Header.Get(hdrRequestID)

	rc.write("POST " + pathInvocation + id + "/response HTTP/1.1\r\nHost: fake\r\nContent-Length: 6\r\n\r\n\"pong\"" + rawNext)
	if resp, _ := rc.read(); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("response: status %d", resp.StatusCode)
	}
	if err := s.WaitPolls(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, done); r.err != nil || string(r.res.Body) != `"pong"` || string(payload) != `"ping"` {
		t.Fatalf("Invoke = %+v, %v (payload %q)", r.res, r.err, payload)
	}
	st := s.Stats()
	if st.Violations != 0 || st.MaxOutstanding != 1 || st.NewConns != 1 || st.Polls != 2 {
		t.Errorf("stats %+v", st)
	}
	s.Close()
	if resp, _ := rc.read(); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("pending poll after Close: status %d, want 500", resp.StatusCode)
	}
}

// A response cut short ends the invocation as truncated.
func TestTruncatedResponse(t *testing.T) {
	s := newServer(t, Options{})
	ctx := testCtx(t)
	rc := pollRaw(t, s)
	done := invokeAsync(ctx, s, Request{Payload: []byte(`{}`)})
	resp, _ := rc.read()
	id := resp.Header.Get(hdrRequestID)
	rc.write("POST " + pathInvocation + id + "/response HTTP/1.1\r\nHost: fake\r\nContent-Length: 100\r\n\r\n0123456789")
	rc.c.Close()
	r := recv(t, done)
	if r.err != nil || r.res.Err == nil || r.res.Err.Type != ErrorTypeTruncated {
		t.Fatalf("Invoke = %+v, %v; want truncated", r.res, r.err)
	}
	if st := s.Stats(); st.Truncated != 1 || st.Ended() != 1 || st.Outstanding != 0 {
		t.Errorf("stats %+v", st)
	}
}
