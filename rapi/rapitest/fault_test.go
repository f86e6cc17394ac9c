package rapitest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const rawInitError = "POST " + pathInitError + " HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

// readRaw reads what the server sends until it ends the connection.
func (rc *rawConn) readRaw() ([]byte, error) {
	return io.ReadAll(rc.br)
}

// TestFaultByCall: each form of Fault, given by call index, as the client
// sees it on the wire, and whether the request was served.
func TestFaultByCall(t *testing.T) {
	tests := []struct {
		name      string
		fault     Fault
		wantBytes string // prefix of what the client reads ("" = nothing)
		wantErr   error  // read error, nil = orderly end (or a full reply)
		minTime   time.Duration
		served    bool
		keepAlive bool // a whole reply on a connection that stays open
	}{
		{name: "status", fault: Fault{Status: 410}, wantBytes: "HTTP/1.1 410 Gone\r\n", keepAlive: true},
		{name: "malformed status line", fault: Fault{Raw: []byte("HTTP/1.1 2OO OK\r\n\r\n")}, wantBytes: "HTTP/1.1 2OO OK\r\n\r\n"},
		{name: "bad header", fault: Fault{Raw: []byte("HTTP/1.1 202 Accepted\r\nContent Length 2\r\n\r\n")}, wantBytes: "HTTP/1.1 202 Accepted\r\nContent Length 2"},
		{name: "drop", fault: Fault{Drop: true}},
		{name: "reset", fault: Fault{Reset: true}, wantErr: syscall.ECONNRESET},
		{name: "raw then reset", fault: Fault{Raw: []byte("HTTP/1.1 200 OK\r\nContent-Le"), Reset: true}, wantBytes: "HTTP/1.1 200 OK\r\nContent-Le", wantErr: syscall.ECONNRESET},
		{name: "stall then serve", fault: Fault{Stall: 60 * time.Millisecond}, wantBytes: "HTTP/1.1 202 Accepted", minTime: 60 * time.Millisecond, served: true, keepAlive: true},
		{name: "stall then status", fault: Fault{Stall: 60 * time.Millisecond, Status: 500}, wantBytes: "HTTP/1.1 500", minTime: 60 * time.Millisecond, keepAlive: true},
		{name: "stall mid-reply", fault: Fault{Raw: []byte("HTTP/1.1 202 Acc"), Stall: 60 * time.Millisecond}, wantBytes: "HTTP/1.1 202 Acc", minTime: 60 * time.Millisecond},
		{name: "cut", fault: Fault{Cut: 20}, wantBytes: "HTTP/1.1 202 Accepte", served: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fault
			s := newServer(t, Options{Faults: func(call int, _ *http.Request) *Fault {
				if call == 1 {
					return &f
				}
				return nil
			}})
			rc := dialRaw(t, s)
			start := time.Now()
			rc.write(rawInitError)
			if tt.keepAlive {
				resp, _ := rc.read()
				if got := resp.Proto + " " + resp.Status; !strings.HasPrefix(got, tt.wantBytes[:12]) {
					t.Errorf("reply %q, want %q", got, tt.wantBytes)
				}
			} else {
				got, err := rc.readRaw()
				// A reset may discard bytes the client had not read yet.
				whole := strings.HasPrefix(string(got), tt.wantBytes)
				cutByReset := tt.fault.Reset && strings.HasPrefix(tt.wantBytes, string(got))
				if !whole && !cutByReset || tt.wantBytes == "" && len(got) != 0 {
					t.Errorf("read %q, want prefix %q", got, tt.wantBytes)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) || tt.wantErr == nil && err != nil {
					t.Errorf("read error %v, want %v", err, tt.wantErr)
				}
				if f.Cut > 0 && len(got) != f.Cut {
					t.Errorf("cut reply is %d bytes, want %d", len(got), f.Cut)
				}
			}
			if d := time.Since(start); d < tt.minTime {
				t.Errorf("answered after %v, want a stall of %v", d, tt.minTime)
			}
			// The fault applied to call 1 only: call 2 is served.
			rc2 := dialRaw(t, s)
			rc2.write(rawInitError)
			if resp, _ := rc2.read(); resp.StatusCode != http.StatusAccepted {
				t.Errorf("call 2: status %d", resp.StatusCode)
			}
			st := s.Stats()
			want := int64(1)
			if tt.served {
				want = 2
			}
			if st.Faults != 1 || st.InitErrors != want {
				t.Errorf("faults %d, init errors %d; want 1, %d", st.Faults, st.InitErrors, want)
			}
		})
	}
}

// ReadBody: the server reads a large post whole before it ends the
// connection unanswered, so that the client's write completes and it sees an
// orderly end (Drop) or a reset (Reset), and nothing is served.
func TestFaultReadBody(t *testing.T) {
	body := strings.Repeat("b", 1<<20)
	post := "POST " + pathInvocation + "x/response HTTP/1.1\r\nHost: fake\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	for _, tt := range []struct {
		name    string
		fault   Fault
		wantErr error
	}{
		{"drop", Fault{Drop: true, ReadBody: true}, nil},
		{"reset", Fault{Reset: true, ReadBody: true}, syscall.ECONNRESET},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, Options{Faults: func(int, *http.Request) *Fault { return &tt.fault }})
			rc := dialRaw(t, s)
			rc.write(post)
			got, err := rc.readRaw()
			if len(got) != 0 || tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("read %q, %v; want nothing and %v", got, err, tt.wantErr)
			}
			if st := s.Stats(); st.Faults != 1 || st.BadRequests != 0 || st.Unknown != 0 {
				t.Fatalf("stats %+v: the post was served", st)
			}
		})
	}
}

// A stalled reply ends when the server closes, whatever its Stall.
func TestFaultStallEndsOnClose(t *testing.T) {
	s := newServer(t, Options{Faults: func(int, *http.Request) *Fault {
		return &Fault{Raw: []byte("HTTP/1.1 200 OK\r\n"), Stall: time.Hour}
	}})
	rc := dialRaw(t, s)
	rc.write(rawNext)
	done := make(chan error, 1)
	go func() { _, err := rc.readRaw(); done <- err }()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	s.Close()
	recv(t, done)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v with a stalled reply", d)
	}
}

// TestFaultByInvocation: a fault on the /next reply of one invocation loses
// it (it ends by its deadline); a fault on the reply to its post leaves the
// post accounted as usual.
func TestFaultByInvocation(t *testing.T) {
	t.Run("next reply cut", func(t *testing.T) {
		s := newServer(t, Options{Timeout: 100 * time.Millisecond})
		ctx := testCtx(t)
		rc := pollRaw(t, s)
		res, err := s.Invoke(ctx, Request{Payload: []byte(`{"big":"payload"}`), Fault: &Fault{Cut: 60, Reset: true}})
		if err != nil || res.Err == nil || res.Err.Type != ErrorTypeTimeout {
			t.Fatalf("Invoke = %+v, %v; want a timeout", res, err)
		}
		got, rerr := rc.readRaw()
		if len(got) != 60 || !bytes.HasPrefix(got, []byte("HTTP/1.1 200 OK\r\n")) || !errors.Is(rerr, syscall.ECONNRESET) {
			t.Fatalf("client read %q, %v", got, rerr)
		}
		if st := s.Stats(); st.Timeouts != 1 || st.Faults != 1 || st.Ended() != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
	for _, tt := range []struct {
		name   string
		fault  Fault
		status int // -1: a transport error
	}{
		{"post answered 410", Fault{Status: http.StatusGone}, http.StatusGone},
		{"post answered 400", Fault{Status: http.StatusBadRequest}, http.StatusBadRequest},
		{"post reset", Fault{Reset: true}, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, Options{})
			rt := newTestRuntime(t, s)
			ctx := testCtx(t)
			polled := rt.nextPending(ctx)
			f := tt.fault
			done := invokeAsync(ctx, s, Request{Payload: []byte(`"x"`), PostFault: &f})
			ev := recv(t, polled)
			got, err := rt.do(ctx, http.MethodPost, pathInvocation+ev.id()+"/response", nil, []byte(`"y"`), false)
			if tt.status < 0 && err == nil || tt.status >= 0 && (err != nil || got.status != tt.status) {
				t.Fatalf("post: status %d, %v; want %d", got.status, err, tt.status)
			}
			r := recv(t, done)
			if r.err != nil || string(r.res.Body) != `"y"` {
				t.Fatalf("Invoke = %+v, %v; want the response accounted", r.res, r.err)
			}
			if st := s.Stats(); st.Responses != 1 || st.Faults != 1 || st.Outstanding != 0 || st.Ended() != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}
