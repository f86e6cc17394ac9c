package rapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func mustNext(t *testing.T, cn *Conn, inv *Invocation) {
	t.Helper()
	if err := cn.Next(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
}

func TestKeepAliveReuse(t *testing.T) {
	srv := newTestServer(t, apiHandler([]byte(`{"n":1}`)))
	cn := srv.client(t).Conn()
	defer cn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inv Invocation
	for i := range 1000 {
		if err := cn.Next(ctx, &inv); err != nil {
			t.Fatalf("next %d: %v", i, err)
		}
		if err := cn.Respond(ctx, &inv, inv.Payload, "application/json", queueOf(cn)); err != nil {
			t.Fatalf("respond %d: %v", i, err)
		}
	}
	if got := srv.accepts.Load(); got != 1 {
		t.Fatalf("accepts = %d, want 1", got)
	}
	if got := srv.requests.Load(); got != 2000 {
		t.Fatalf("requests = %d, want 2000", got)
	}
	want := Invocation{RequestID: testRequestID, FunctionARN: testARN, TraceID: testTrace, InvocationID: testInvID,
		ContentType: "application/json", DeadlineMs: 1700000000123, Deadline: time.UnixMilli(1700000000123),
		Payload: []byte(`{"n":1}`)}
	if inv.RequestID != want.RequestID || inv.FunctionARN != want.FunctionARN || inv.TraceID != want.TraceID ||
		inv.InvocationID != want.InvocationID || inv.ContentType != want.ContentType || inv.DeadlineMs != want.DeadlineMs ||
		!inv.Deadline.Equal(want.Deadline) || inv.DeadlineErr != nil || !bytes.Equal(inv.Payload, want.Payload) {
		t.Fatalf("got %+v", inv)
	}
}

func TestRequestsOnTheWire(t *testing.T) {
	type seen struct{ line, ct, errType, xray, body string }
	got := make(chan seen, 10)
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		got <- seen{string(r.line), string(r.headerValue(hdrContentType)), string(r.headerValue(hdrErrorType)),
			string(r.headerValue(hdrXRayErrorCause)), string(r.body)}
		if r.is("GET", pathNext) {
			sc.bw.Write(nextResponse(testRequestID, nil, ""))
		} else {
			sc.bw.Write(accepted)
		}
		return keepOpen
	})
	c := srv.client(t)
	cn := c.Conn()
	defer cn.Close()
	ctx := context.Background()
	big := bytes.Repeat([]byte("z"), 1<<20) // takes the writev path
	var inv Invocation
	mustNext(t, cn, &inv)
	steps := []struct {
		do   func() error
		want seen
	}{
		{func() error {
			return cn.Respond(ctx, &Invocation{RequestID: "r1"}, []byte("hi"), "text/plain", queueOf(cn))
		},
			seen{"POST /2018-06-01/runtime/invocation/r1/response HTTP/1.1", "text/plain", "", "", "hi"}},
		{func() error { return cn.Respond(ctx, &Invocation{RequestID: "r2"}, big, "", queueOf(cn)) },
			seen{"POST /2018-06-01/runtime/invocation/r2/response HTTP/1.1", "", "", "", string(big)}},
		{func() error {
			return cn.Fail(ctx, &Invocation{RequestID: "r3"}, "Handler.Err", []byte(`{"errorType":"x"}`), []byte(`{"c":1}`), queueOf(cn))
		},
			seen{"POST /2018-06-01/runtime/invocation/r3/error HTTP/1.1", contentJSON, "Handler.Err", `{"c":1}`, `{"errorType":"x"}`}},
		{func() error { return c.InitError(ctx, "Runtime.Boom", []byte(`{}`)) },
			seen{"POST /2018-06-01/runtime/init/error HTTP/1.1", contentJSON, "Runtime.Boom", "", `{}`}},
	}
	if g := <-got; g.line != "GET /2018-06-01/runtime/invocation/next HTTP/1.1" {
		t.Fatalf("next line %q", g.line)
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if g := <-got; g != s.want {
			t.Fatalf("step %d: got %.200q\nwant %.200q", i, g, s.want)
		}
	}
	if a := srv.accepts.Load(); a != 2 { // the Conn, and InitError's own
		t.Fatalf("accepts = %d", a)
	}
}

func TestChunkedResponses(t *testing.T) {
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		if r.is("GET", pathNext) {
			sc.bw.WriteString("HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: c-" + strconv.Itoa(sc.n) +
				"\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-T: 1\r\n\r\n")
		} else {
			sc.bw.WriteString("HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
		}
		return keepOpen
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	var inv Invocation
	for i := range 3 {
		mustNext(t, cn, &inv)
		if string(inv.Payload) != `{"a":1}` || inv.RequestID != "c-"+strconv.Itoa(2*i) {
			t.Fatalf("%d: %q %q", i, inv.RequestID, inv.Payload)
		}
		if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); err != nil {
			t.Fatal(err)
		}
	}
	if a := srv.accepts.Load(); a != 1 {
		t.Fatalf("accepts = %d", a)
	}
}

func TestConnectionClose(t *testing.T) {
	tests := []struct {
		name string
		resp string
	}{
		{"header", "HTTP/1.1 200 OK\r\nConnection: close\r\nLambda-Runtime-Aws-Request-Id: a\r\nContent-Length: 2\r\n\r\nok"},
		{"http/1.0", "HTTP/1.0 200 OK\r\nLambda-Runtime-Aws-Request-Id: a\r\nContent-Length: 2\r\n\r\nok"},
		{"body until close", "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: a\r\n\r\nok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
				sc.bw.WriteString(tt.resp)
				return closeConn
			})
			cn := srv.client(t).Conn()
			defer cn.Close()
			var inv Invocation
			for range 3 {
				mustNext(t, cn, &inv)
				if string(inv.Payload) != "ok" {
					t.Fatalf("payload %q", inv.Payload)
				}
			}
			if a := srv.accepts.Load(); a != 3 {
				t.Fatalf("accepts = %d, want 3", a)
			}
		})
	}
}

func TestStatusCodes(t *testing.T) {
	tests := []struct {
		code int
		want error
	}{
		{400, errBadRequest}, {403, errForbidden}, {410, errGone}, {413, errTooLarge},
		{500, ErrRuntimeAPI}, {502, ErrRuntimeAPI}, {404, nil},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			body := `{"errorMessage":"nope","errorType":"X"}`
			resp := "HTTP/1.1 " + strconv.Itoa(tt.code) + " Whatever\r\nContent-Type: application/json\r\nContent-Length: " +
				strconv.Itoa(len(body)) + "\r\n\r\n" + body
			srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
				sc.bw.WriteString(resp)
				return keepOpen
			})
			cn := srv.client(t).Conn()
			defer cn.Close()
			ctx := context.Background()
			var inv Invocation
			calls := map[string]func() error{
				opNext:     func() error { return cn.Next(ctx, &inv) },
				opResponse: func() error { return cn.Respond(ctx, &Invocation{RequestID: "id"}, []byte("x"), "", queueOf(cn)) },
				opError:    func() error { return cn.Fail(ctx, &Invocation{RequestID: "id"}, "E", []byte("{}"), nil, queueOf(cn)) },
			}
			for op, call := range calls {
				err := call()
				var se *StatusError
				if !errors.As(err, &se) || se.Code != tt.code || se.Op != op || string(se.Body) != body {
					t.Fatalf("%s: err = %#v", op, err)
				}
				if tt.want != nil && !errors.Is(err, tt.want) {
					t.Fatalf("%s: %v is not %v", op, err, tt.want)
				}
				if errors.Is(err, ErrTransport) || errors.Is(err, errMalformed) {
					t.Fatalf("%s: %v", op, err)
				}
			}
			if a := srv.accepts.Load(); a != 1 {
				t.Fatalf("accepts = %d: a status error must keep the connection", a)
			}
		})
	}
}

func TestStatusBodyBounded(t *testing.T) {
	big := strings.Repeat("e", 10000)
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		sc.bw.WriteString("HTTP/1.1 500 Internal\r\nContent-Length: " + strconv.Itoa(len(big)) + "\r\n\r\n" + big)
		return keepOpen
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	err := cn.Respond(context.Background(), &Invocation{RequestID: "id"}, nil, "", queueOf(cn))
	var se *StatusError
	if !errors.As(err, &se) || len(se.Body) != maxStatusBody || !errors.Is(err, ErrRuntimeAPI) {
		t.Fatalf("err = %v", err)
	}
	if err := cn.Respond(context.Background(), &Invocation{RequestID: "id"}, nil, "", queueOf(cn)); !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	if a := srv.accepts.Load(); a != 1 {
		t.Fatalf("accepts = %d", a)
	}
}

func TestPayloadTooLarge(t *testing.T) {
	tests := []struct {
		name        string
		size        int
		chunked     bool
		wantAccepts int64
	}{
		{"discarded, conn kept", 100 << 10, false, 1},
		{"chunked discarded, conn kept", 100 << 10, true, 1},
		{"too big to discard, conn dropped", maxDiscardPayload + 1, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := bytes.Repeat([]byte("p"), tt.size)
			srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
				if sc.srv.requests.Load()%2 == 0 {
					sc.bw.Write(nextResponse("small", []byte("ok"), ""))
					return keepOpen
				}
				if !tt.chunked {
					sc.bw.Write(nextResponse("big-id", payload, ""))
					return keepOpen
				}
				sc.bw.WriteString("HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: big-id\r\nLambda-Runtime-Trace-Id: T\r\nTransfer-Encoding: chunked\r\n\r\n")
				for off := 0; off < len(payload); off += 1000 {
					chunk := payload[off:min(off+1000, len(payload))]
					sc.bw.WriteString(strconv.FormatInt(int64(len(chunk)), 16) + "\r\n")
					sc.bw.Write(chunk)
					sc.bw.WriteString("\r\n")
				}
				sc.bw.WriteString("0\r\n\r\n")
				return keepOpen
			})
			cn := srv.client(t, WithMaxRequestBytes(64<<10)).Conn()
			defer cn.Close()
			inv := Invocation{Payload: make([]byte, 0, 16)}
			err := cn.Next(context.Background(), &inv)
			if !errors.Is(err, ErrPayloadTooLarge) {
				t.Fatalf("err = %v", err)
			}
			if inv.RequestID != "big-id" || len(inv.Payload) != 0 {
				t.Fatalf("id %q payload %d", inv.RequestID, len(inv.Payload))
			}
			if !tt.chunked && cap(inv.Payload) != 16 {
				t.Fatalf("cap grew to %d before the length was checked", cap(inv.Payload))
			}
			mustNext(t, cn, &inv)
			if inv.RequestID != "small" || string(inv.Payload) != "ok" {
				t.Fatalf("after: %q %q", inv.RequestID, inv.Payload)
			}
			if a := srv.accepts.Load(); a != tt.wantAccepts {
				t.Fatalf("accepts = %d, want %d", a, tt.wantAccepts)
			}
		})
	}
}

func TestLargePayload(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789"), 600<<10) // 6 000 KiB
	srv := newTestServer(t, apiHandler(payload))
	cn := srv.client(t).Conn()
	defer cn.Close()
	var inv Invocation
	for range 2 {
		mustNext(t, cn, &inv)
		if !bytes.Equal(inv.Payload, payload) {
			t.Fatal("payload differs")
		}
	}
}

// TestManySmallChunks reads a 6 MiB chunked payload in 512-byte chunks: its
// 12 288 chunk-size lines are framing of a valid body, not an excess of it.
func TestManySmallChunks(t *testing.T) {
	payload := make([]byte, 6<<20)
	for i := range payload {
		payload[i] = byte(i*7 + i>>9)
	}
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		sc.bw.WriteString(okHead + "Transfer-Encoding: chunked\r\n\r\n")
		for off := 0; off < len(payload); off += 512 {
			sc.bw.WriteString("200\r\n")
			sc.bw.Write(payload[off : off+512])
			sc.bw.WriteString("\r\n")
		}
		sc.bw.WriteString("0\r\nX-Trailer: 1\r\n\r\n")
		return keepOpen
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	var inv Invocation
	for range 2 { // the connection stays usable after the body
		mustNext(t, cn, &inv)
		if !bytes.Equal(inv.Payload, payload) {
			t.Fatalf("payload of %d bytes differs", len(inv.Payload))
		}
	}
	if a := srv.accepts.Load(); a != 1 {
		t.Fatalf("accepts = %d, want 1", a)
	}
}

func TestResetMidBody(t *testing.T) {
	var calls atomic.Int64
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		if calls.Add(1) == 1 {
			sc.bw.WriteString("HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: a\r\nContent-Length: 100\r\n\r\nonly ten..")
			return resetConn
		}
		sc.bw.Write(nextResponse("b", []byte("ok"), ""))
		return keepOpen
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	var inv Invocation
	err := cn.Next(context.Background(), &inv)
	if !errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v", err)
	}
	// The request ID had been read: it is kept so that the invocation can
	// be failed; nothing else is.
	if inv.RequestID != "a" || len(inv.Payload) != 0 || inv.DeadlineErr == nil {
		t.Fatalf("inv not reset to its request ID: %+v", inv)
	}
	mustNext(t, cn, &inv)
	if inv.RequestID != "b" {
		t.Fatalf("id %q", inv.RequestID)
	}
	if a := srv.accepts.Load(); a != 2 {
		t.Fatalf("accepts = %d", a)
	}
}

func TestServerClosesIdle(t *testing.T) {
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		sc.bw.Write(accepted)
		return closeConn // without saying so
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	ctx := context.Background()
	if err := cn.Respond(ctx, &Invocation{RequestID: "a"}, nil, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let the FIN arrive
	if err := cn.Respond(ctx, &Invocation{RequestID: "a"}, nil, "", queueOf(cn)); !errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v: never retried, so a stale connection shows", err)
	}
	if err := cn.Respond(ctx, &Invocation{RequestID: "a"}, nil, "", queueOf(cn)); err != nil {
		t.Fatalf("redial: %v", err)
	}
}

func TestNextRetriesOnceOnStaleConn(t *testing.T) {
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		sc.bw.Write(nextResponse("id-"+strconv.FormatInt(sc.srv.requests.Load(), 10), nil, ""))
		return closeConn // without saying so
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	var inv Invocation
	for i := 1; i <= 3; i++ {
		time.Sleep(20 * time.Millisecond) // let the FIN arrive
		mustNext(t, cn, &inv)
		if inv.RequestID != "id-"+strconv.Itoa(i) {
			t.Fatalf("got %q", inv.RequestID)
		}
	}
	if a := srv.accepts.Load(); a != 3 {
		t.Fatalf("accepts = %d", a)
	}
}

func TestNextNoRetryOnFreshConn(t *testing.T) {
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action { return closeConn })
	cn := srv.client(t).Conn()
	defer cn.Close()
	if err := cn.Next(context.Background(), &Invocation{}); !errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v", err)
	}
	if a := srv.accepts.Load(); a != 1 {
		t.Fatalf("accepts = %d: a fresh connection is never retried", a)
	}
}

// closedPortClient returns a Client for a loopback port nothing listens on.
func closedPortClient(t *testing.T) *Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New(addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDialFailure(t *testing.T) {
	c := closedPortClient(t)
	cn := c.Conn()
	defer cn.Close()
	if err := cn.Next(context.Background(), &Invocation{}); !errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v", err)
	}
	if err := c.InitError(context.Background(), "E", nil); !errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v", err)
	}
}

func TestDialer(t *testing.T) {
	srv := newTestServer(t, apiHandler(nil))
	var dials atomic.Int64
	c := srv.client(t, withDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}), withReadBufferSize(256), withDialTimeout(time.Second))
	cn := c.Conn()
	defer cn.Close()
	var inv Invocation
	for range 5 {
		mustNext(t, cn, &inv)
	}
	if dials.Load() != 1 {
		t.Fatalf("dials = %d", dials.Load())
	}
}

func TestContextCancelUnblocks(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
				if sc.srv.requests.Load() == 1 {
					sc.wait() // a long poll that never answers
					return closeConn
				}
				sc.bw.Write(nextResponse("x", nil, ""))
				return keepOpen
			})
			cn := srv.client(t).Conn()
			defer cn.Close()
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			err := cn.Next(ctx, &Invocation{})
			if !errors.Is(err, tt.want) || errors.Is(err, ErrTransport) {
				t.Fatalf("err = %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
			// The same done context fails at once; a fresh one redials.
			if err := cn.Next(ctx, &Invocation{}); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v", err)
			}
			var inv Invocation
			mustNext(t, cn, &inv)
			if inv.RequestID != "x" || srv.accepts.Load() != 2 {
				t.Fatalf("id %q accepts %d", inv.RequestID, srv.accepts.Load())
			}
		})
	}
}

func TestContextSwitching(t *testing.T) {
	// A cancelled old context must not disturb calls under a new one.
	srv := newTestServer(t, apiHandler([]byte("{}")))
	cn := srv.client(t).Conn()
	defer cn.Close()
	var inv Invocation
	for i := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		if err := cn.Next(ctx, &inv); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		cancel() // fires the watcher while idle
		if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
	}
}

func TestCloseUnblocks(t *testing.T) {
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		sc.wait()
		return closeConn
	})
	cn := srv.client(t).Conn()
	done := make(chan error, 1)
	go func() { done <- cn.Next(context.Background(), &Invocation{}) }()
	time.Sleep(50 * time.Millisecond)
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errClosed) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next still blocked")
	}
	if err := cn.Next(context.Background(), &Invocation{}); !errors.Is(err, errClosed) {
		t.Fatalf("err = %v", err)
	}
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBadRequestIDsNotSent(t *testing.T) {
	srv := newTestServer(t, apiHandler(nil))
	cn := srv.client(t).Conn()
	defer cn.Close()
	ctx := context.Background()
	for _, id := range []string{"", "a/b", "a b", "a\r\nb", "..", "a?b", "a#b", "\x01"} {
		if err := cn.Respond(ctx, &Invocation{RequestID: id}, nil, "", queueOf(cn)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%q: err = %v", id, err)
		}
		if err := cn.Fail(ctx, &Invocation{RequestID: id}, "E", nil, nil, queueOf(cn)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%q: err = %v", id, err)
		}
	}
	if err := cn.Next(ctx, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	if srv.accepts.Load() != 0 || srv.requests.Load() != 0 {
		t.Fatal("something was sent")
	}
}

func TestNextWithoutUsableRequestID(t *testing.T) {
	for _, hdr := range []string{"", "Lambda-Runtime-Aws-Request-Id: a/b\r\n", "Lambda-Runtime-Aws-Request-Id: \r\n"} {
		srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
			if sc.n == 0 {
				sc.bw.WriteString("HTTP/1.1 200 OK\r\n" + hdr + "Lambda-Runtime-Trace-Id: t\r\nContent-Length: 2\r\n\r\n{}")
			} else {
				sc.bw.Write(nextResponse("good", nil, ""))
			}
			return keepOpen
		})
		cn := srv.client(t).Conn()
		var inv Invocation
		if err := cn.Next(context.Background(), &inv); !errors.Is(err, errMalformed) {
			t.Fatalf("%q: err = %v", hdr, err)
		}
		if inv.RequestID != "" || inv.TraceID != "" {
			t.Fatalf("%q: inv not reset: %+v", hdr, inv)
		}
		mustNext(t, cn, &inv)
		if srv.accepts.Load() != 1 { // the body was skipped, the connection kept
			t.Fatalf("accepts = %d", srv.accepts.Load())
		}
		cn.Close()
	}
}

func TestMalformedDropsConn(t *testing.T) {
	tests := []struct{ name, resp string }{
		{"status line", "HTTP/1.1 OK 200\r\n\r\n"},
		{"header", "HTTP/1.1 200 OK\r\nBad Header\r\n\r\n"},
		{"length", "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: a\r\nContent-Length: 1e3\r\n\r\n"},
		{"header too large", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 100<<10) + "\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
				if sc.n == 0 && sc.srv.accepts.Load() == 1 {
					sc.bw.WriteString(tt.resp)
					return keepOpen
				}
				sc.bw.Write(nextResponse("good", nil, ""))
				return keepOpen
			})
			cn := srv.client(t).Conn()
			defer cn.Close()
			var inv Invocation
			err := cn.Next(context.Background(), &inv)
			if !errors.Is(err, errMalformed) || errors.Is(err, ErrTransport) {
				t.Fatalf("err = %v", err)
			}
			mustNext(t, cn, &inv)
			if inv.RequestID != "good" || srv.accepts.Load() != 2 {
				t.Fatalf("id %q accepts %d", inv.RequestID, srv.accepts.Load())
			}
		})
	}
}

func TestEarlyAnswerBeatsWriteError(t *testing.T) {
	// The caller must see ErrTooLarge, not a transport error.
	cn := earlyAnswerConn(t)
	err := cn.Respond(context.Background(), &Invocation{RequestID: "id"}, make([]byte, 64<<20), "", queueOf(cn))
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

// earlyAnswerConn returns a Conn to a server that refuses a large body with
// 413 after reading the start of the request only, then resets: a large
// post's write fails after the answer has come.
func earlyAnswerConn(t *testing.T) *Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 1024)
		nc.Read(buf) // the start of the request only
		nc.Write([]byte("HTTP/1.1 413 Too Large\r\nContent-Length: 4\r\n\r\nbig!"))
		nc.(*net.TCPConn).SetLinger(0)
		nc.Close()
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	c, err := New(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cn := c.Conn()
	t.Cleanup(func() { cn.Close() })
	return cn
}

func TestInvocationReuseAndInterning(t *testing.T) {
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		id := "id-" + strconv.Itoa(sc.n)
		extra := ""
		if sc.n == 0 {
			extra = "Lambda-Runtime-Client-Context: {}\r\nLambda-Runtime-Aws-Tenant-Id: t\r\n"
		}
		sc.bw.Write(nextResponse(id, []byte(strings.Repeat("x", 10-sc.n)), extra))
		return keepOpen
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	var inv Invocation
	mustNext(t, cn, &inv)
	first := inv
	if inv.ClientContext != "{}" || inv.TenantID != "t" {
		t.Fatalf("%+v", inv)
	}
	mustNext(t, cn, &inv)
	if inv.RequestID != "id-1" || inv.ClientContext != "" || inv.TenantID != "" || string(inv.Payload) != "xxxxxxxxx" {
		t.Fatalf("stale fields: %+v", inv)
	}
	if first.RequestID != "id-0" {
		t.Fatalf("strings were rewritten: %q", first.RequestID)
	}
	if &first.Payload[0] != &inv.Payload[0] {
		t.Fatal("payload buffer not reused")
	}
	if unsafeStringData(first.FunctionARN) != unsafeStringData(inv.FunctionARN) {
		t.Fatal("function ARN not interned")
	}
}

// TestWatchDormantDuringPost: the runtime's pattern, a poll under a
// long-lived context and an answer under context.Background. The poll's
// context ending while the answer is on the wire does not cut the answer
// off; the next call under it reports it.
func TestWatchDormantDuringPost(t *testing.T) {
	posted := make(chan struct{})
	proceed := make(chan struct{})
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		if r.is("GET", pathNext) {
			sc.bw.Write(nextResponse(testRequestID, nil, ""))
			return keepOpen
		}
		close(posted)
		<-proceed // the poll's context ends meanwhile
		sc.bw.Write(accepted)
		return keepOpen
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inv Invocation
	mustNextCtx(t, cn, ctx, &inv)
	go func() {
		<-posted
		cancel()
		// Long enough for an interruption to reach the connection.
		time.Sleep(20 * time.Millisecond)
		close(proceed)
	}()
	if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); err != nil {
		t.Fatalf("Respond cut off by the poll's context: %v", err)
	}
	if err := cn.Next(ctx, &inv); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after the end of its context: %v", err)
	}
	if srv.accepts.Load() != 1 {
		t.Fatalf("accepts = %d", srv.accepts.Load())
	}
}

func mustNextCtx(t *testing.T, cn *Conn, ctx context.Context, inv *Invocation) {
	t.Helper()
	if err := cn.Next(ctx, inv); err != nil {
		t.Fatal(err)
	}
}

// TestCutReply: CutReply cuts the wait for the reply to a post made before
// the time it is given, never an idle connection nor a later post, until
// the reply's head is read in full: no reply, or only its status line. The
// post it cuts fails with ErrTransport and ErrNoReply, and the Conn serves
// on with a fresh connection.
func TestCutReply(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply string // what the first post gets before the server stalls
	}{
		{"no reply", ""},
		{"head", "HTTP/1.1 202 Accepted\r\n"},
		{"headers", "HTTP/1.1 202 Accepted\r\nContent-Length: 16\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, stallingAPI(tt.reply, func(conn int64) bool { return conn == 1 }))
			w := newReadWatch()
			cn := srv.client(t, w.option()).Conn()
			defer cn.Close()
			var inv Invocation
			mustNext(t, cn, &inv)
			if cn.CutReply(time.Now().Add(time.Hour)) {
				t.Fatal("cut an idle connection")
			}
			before := time.Now()
			w.armed.Store(true)
			done := make(chan error, 1)
			go func() { done <- cn.Respond(context.Background(), &inv, []byte("ok"), "", false) }()
			if tt.reply != "" {
				w.wait(t) // cut a head begun, not a reply still to come
			}
			for deadline := time.Now().Add(10 * time.Second); !cn.CutReply(time.Now()); time.Sleep(time.Millisecond) {
				if cn.CutReply(before) {
					t.Fatal("cut the reply to a post made after the time it was given")
				}
				if time.Now().After(deadline) {
					t.Fatal("the post never waited for its reply")
				}
			}
			if err := <-done; !errors.Is(err, ErrTransport) || !errors.Is(err, ErrNoReply) {
				t.Fatalf("err = %v, want a transport error and ErrNoReply", err)
			}
			mustNext(t, cn, &inv)
			if err := cn.Respond(context.Background(), &inv, []byte("ok"), "", false); err != nil {
				t.Fatalf("after the cut: %v", err)
			}
		})
	}
}

// stallingAPI hands out invocations and accepts posts, but a post on a
// connection that stall names (1 for the first dialed) gets only first,
// the start of its reply, on connection 1, then nothing more until the
// server closes. It goes by connection, not by the order in which its
// goroutines read posts: a post sent again after a cut goes out on a new
// connection, which the server may read before the one cut.
func stallingAPI(first string, stall func(conn int64) bool) handler {
	var posts atomic.Int64
	return func(sc *srvConn, r *srvReq) action {
		if r.is("GET", pathNext) {
			sc.bw.Write(nextResponse("id-"+strconv.FormatInt(posts.Load(), 10), nil, ""))
			return keepOpen
		}
		posts.Add(1)
		if stall(sc.id) {
			if sc.id == 1 {
				sc.bw.WriteString(first)
				sc.bw.Flush()
			}
			sc.wait()
			return closeConn
		}
		sc.bw.Write(accepted)
		return keepOpen
	}
}

// TestCutReplyLeftToNext: a reply left to Next (pipelining) that CutReply
// cuts makes Next return an *AnswerError wrapping ErrNoReply, even when
// the post sent again is accepted. The reply to that post is under
// CutReply alike. An answer cut once its status line came is not sent
// again, and the poll queued behind it is reported lost. Each time the
// Next after it polls afresh.
func TestCutReplyLeftToNext(t *testing.T) {
	for _, tt := range []struct {
		name   string
		first  string // what the first post gets before the server stalls
		again  bool   // the post sent again stalls too
		resent bool
		cuts   int64
	}{
		{"no reply, sent again", "", false, true, 1},
		{"no reply, sent again, no reply", "", true, true, 2},
		{"head", "HTTP/1.1 202 Accepted\r\n", false, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The post goes out on connection 1, the one sent again on 2.
			srv := newTestServer(t, stallingAPI(tt.first, func(conn int64) bool { return conn == 1 || conn == 2 && tt.again }))
			w := newReadWatch()
			cn := pipe(srv.client(t, w.option()).Conn(), always)
			defer cn.Close()
			cn.pipe.fresh = time.Hour // the answer is left to Next, however slow the machine
			var inv Invocation
			mustNext(t, cn, &inv)
			if err := cn.Respond(context.Background(), &inv, []byte("ok"), "", queueOf(cn)); err != nil {
				t.Fatal(err)
			}
			// Only the replies the server stalls are cut: the first post's,
			// then the re-post's when it stalls too. An accepted re-post
			// whose 202 is slow to be read is not: CutReply spares later
			// posts.
			cutBefore := time.Now()
			w.armed.Store(true)
			done := make(chan error, 1)
			go func() { done <- cn.Next(context.Background(), &inv) }()
			if tt.first != "" {
				w.wait(t) // cut a head begun, not a reply still to come
			}
			var cuts int64
			var err error
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				if cuts > 0 && tt.again {
					cutBefore = time.Now()
				}
				if cn.CutReply(cutBefore) {
					cuts++
				}
				select {
				case err = <-done:
				default:
					if time.Now().After(deadline) {
						t.Fatal("Next never returned")
					}
					continue
				}
				break
			}
			var ae *AnswerError
			if !errors.As(err, &ae) || !errors.Is(err, ErrNoReply) || ae.Resent != tt.resent || cuts != tt.cuts {
				t.Fatalf("Next = %v (resent %v) after %d cuts; want an *AnswerError with ErrNoReply, resent %v, after %d",
					err, ae != nil && ae.Resent, cuts, tt.resent, tt.cuts)
			}
			if tt.again && !strings.Contains(err.Error(), "sent again: rapi: response: transport failure: no reply") {
				t.Errorf("the post sent again is not said cut: %v", err)
			}
			if !tt.resent && !errors.Is(err, errLostPoll) {
				t.Errorf("the poll queued behind the post is not said lost: %v", err)
			}
			mustNext(t, cn, &inv)
			if err := cn.Respond(context.Background(), &inv, []byte("ok"), "", false); err != nil {
				t.Fatalf("after the cut: %v", err)
			}
		})
	}
}

var benchPayload = []byte(`{"key":"value"}`)

// BenchmarkNextRespond: one invocation (GET /next + POST /response) on a
// warm connection against the loopback test server, by three clients, so
// that benchstat -col /client puts them side by side (make bench):
// rapi; rapi with a queued poll, the next GET /next written behind each POST;
// and the baseline, a well-configured net/http client.
func BenchmarkNextRespond(b *testing.B) {
	b.Run("client=rapi", func(b *testing.B) { benchNextRespond(b, false) })
	b.Run("client=rapi-queued", func(b *testing.B) { benchNextRespond(b, true) })
	b.Run("client=net-http", benchNextRespondNetHTTP)
}

func benchNextRespond(b *testing.B, queue bool) {
	srv := newTestServer(b, apiHandler(benchPayload))
	cn := srv.client(b).Conn()
	defer cn.Close()
	if queue {
		queueOnly(cn)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inv Invocation
	b.ReportAllocs()
	for b.Loop() {
		if err := cn.Next(ctx, &inv); err != nil {
			b.Fatal(err)
		}
		if err := cn.Respond(context.Background(), &inv, inv.Payload, "application/json", queueOf(cn)); err != nil {
			b.Fatal(err)
		}
	}
	if srv.accepts.Load() != 1 {
		b.Fatalf("%d connections", srv.accepts.Load())
	}
}

func benchNextRespondNetHTTP(b *testing.B) {
	srv := newTestServer(b, apiHandler(benchPayload))
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	base := "http://" + srv.addr() + pathInvocation
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"next", nil)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		id := resp.Header.Get(hdrRequestID)
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, base+id+"/response", bytes.NewReader(buf.Bytes()))
		req.Header.Set(hdrContentType, "application/json")
		resp, err = hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			b.Fatal(resp.Status)
		}
	}
	if srv.accepts.Load() != 1 {
		b.Fatalf("net/http opened %d connections", srv.accepts.Load())
	}
}

// BenchmarkParseNext: parsing one /next response from memory.
func BenchmarkParseNext(b *testing.B) {
	raw := nextResponse(testRequestID, benchPayload, "")
	rd := bytes.NewReader(raw)
	cn := &Conn{}
	br := newBenchReader(rd)
	var inv Invocation
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		rd.Reset(raw)
		br.Reset(rd)
		inv.reset()
		cn.hdrs.start(&inv, &cn.in)
		h, err := readHead(br, &cn.spill, &defaultLimits, &cn.hdrs)
		if err != nil {
			b.Fatal(err)
		}
		if err := cn.hdrs.finish(); err != nil {
			b.Fatal(err)
		}
		cn.body.init(br, &cn.spill, h, &defaultLimits)
		if inv.Payload, err = cn.body.readAll(inv.Payload, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextPayload: the request path's read, GET /next with a payload
// of each size on a warm Conn (and a small POST /response), against the
// loopback test server. The payload is read once, into the Invocation's
// own buffer, reused from one call to the next: no allocation of its size.
func BenchmarkNextPayload(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 20, 6 << 20} {
		payload := bytes.Repeat([]byte("p"), n)
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			srv := newTestServer(b, apiHandler(payload))
			cn := srv.client(b).Conn()
			defer cn.Close()
			queueOnly(cn)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var inv Invocation
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := cn.Next(ctx, &inv); err != nil {
					b.Fatal(err)
				}
				if len(inv.Payload) != n {
					b.Fatalf("payload of %d bytes", len(inv.Payload))
				}
				if err := cn.Respond(ctx, &inv, []byte(`1`), "application/json", queueOf(cn)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fakeNetHTTP is a Runtime API served by net/http, to prove that what rapi
// writes and reads is the HTTP/1.1 that a real server speaks.
type fakeNetHTTP struct {
	srv      *httptest.Server
	newConns atomic.Int64
	mu       sync.Mutex
	posts    map[string][]byte // path -> body
	errTypes map[string]string // path -> error type header
	n        atomic.Int64
	payload  []byte
	chunked  bool
}

func newFakeNetHTTP(t *testing.T, payload []byte, chunked bool) *fakeNetHTTP {
	f := &fakeNetHTTP{posts: map[string][]byte{}, errTypes: map[string]string{}, payload: payload, chunked: chunked}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		id := "req-" + strconv.FormatInt(f.n.Add(1), 10)
		h := w.Header()
		h.Set(hdrRequestID, id)
		h.Set(hdrDeadlineMs, "1700000000123")
		h.Set(hdrFunctionARN, testARN)
		h.Set(hdrTraceID, testTrace)
		h.Set(hdrInvocationID, "inv-"+id)
		h.Set(hdrContentType, "application/json")
		if !f.chunked {
			h.Set(hdrContentLength, strconv.Itoa(len(f.payload)))
			w.Write(f.payload)
			return
		}
		half := len(f.payload) / 2
		w.Write(f.payload[:half])
		w.(http.Flusher).Flush() // forces chunked encoding
		w.Write(f.payload[half:])
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "gone" {
			http.Error(w, `{"errorMessage":"Invoke timed out"}`, http.StatusGone)
			return
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts[r.URL.Path] = body
		f.errTypes[r.URL.Path] = r.Header.Get(hdrErrorType)
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"OK"}`)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts[r.URL.Path] = body
		f.errTypes[r.URL.Path] = r.Header.Get(hdrErrorType)
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	f.srv = httptest.NewUnstartedServer(mux)
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.newConns.Add(1)
		}
	}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeNetHTTP) addr() string { return f.srv.Listener.Addr().String() }

func (f *fakeNetHTTP) post(path string) ([]byte, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts[path], f.errTypes[path]
}

func TestInteropNetHTTP(t *testing.T) {
	for _, tt := range []struct {
		name    string
		payload []byte
		chunked bool
		rounds  int // a multiple of 10
	}{
		{"small", []byte(`{"hello":"world"}`), false, 100},
		{"chunked", bytes.Repeat([]byte("c"), 100<<10), true, 100},
		{"large", bytes.Repeat([]byte("L"), 3<<20), false, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeNetHTTP(t, tt.payload, tt.chunked)
			c, err := New(f.addr())
			if err != nil {
				t.Fatal(err)
			}
			cn := c.Conn()
			defer cn.Close()
			ctx := context.Background()
			var inv Invocation
			for i := 1; i <= tt.rounds; i++ {
				if err := cn.Next(ctx, &inv); err != nil {
					t.Fatalf("%d: %v", i, err)
				}
				if inv.RequestID != "req-"+strconv.Itoa(i) || inv.InvocationID != "inv-"+inv.RequestID ||
					inv.FunctionARN != testARN || inv.TraceID != testTrace || inv.DeadlineErr != nil ||
					!bytes.Equal(inv.Payload, tt.payload) {
					t.Fatalf("%d: %q %q %q len %d", i, inv.RequestID, inv.FunctionARN, inv.TraceID, len(inv.Payload))
				}
				if i%10 == 0 {
					if err := cn.Fail(ctx, &inv, "Handler.Err", []byte(`{"errorMessage":"m"}`), []byte(`{"x":1}`), queueOf(cn)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := cn.Respond(ctx, &inv, inv.Payload, "application/json", queueOf(cn)); err != nil {
					t.Fatalf("%d: %v", i, err)
				}
			}
			last := pathInvocation + "req-" + strconv.Itoa(tt.rounds)
			if got, _ := f.post(pathInvocation + "req-" + strconv.Itoa(tt.rounds-1) + "/response"); !bytes.Equal(got, tt.payload) {
				t.Fatalf("response body %d bytes", len(got))
			}
			if got, et := f.post(last + "/error"); string(got) != `{"errorMessage":"m"}` || et != "Handler.Err" {
				t.Fatalf("error %q %q", got, et)
			}
			err = cn.Respond(ctx, &Invocation{RequestID: "gone"}, nil, "", queueOf(cn))
			var se *StatusError
			if !errors.Is(err, errGone) || !errors.As(err, &se) || !bytes.Contains(se.Body, []byte("timed out")) {
				t.Fatalf("err = %v", err)
			}
			if err := cn.Next(ctx, &inv); err != nil {
				t.Fatal(err)
			}
			if n := f.newConns.Load(); n != 1 {
				t.Fatalf("server saw %d connections, want 1", n)
			}
			if err := c.InitError(ctx, "Runtime.Init", []byte(`{"errorMessage":"boom"}`)); err != nil {
				t.Fatal(err)
			}
			if got, et := f.post("/2018-06-01/runtime/init/error"); string(got) != `{"errorMessage":"boom"}` || et != "Runtime.Init" {
				t.Fatalf("init error %q %q", got, et)
			}
		})
	}
}
