package rapi

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestBrokenAnswer: an answer that breaks off after its request ID keeps
// that ID (and nothing else), so that the invocation can be failed; one
// that breaks off before it, or whose ID is unusable, keeps nothing. Either
// way the connection is dropped and the next Next works.
func TestBrokenAnswer(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: "
	big := "X-Big: " + strings.Repeat("h", maxHeadBytes) + "\r\n"
	tests := []struct {
		name   string
		answer string
		act    action
		wantID string
		want   error
		// wantInv: the invocation ID kept beside the request ID, so that
		// the error answer echoes it.
		wantInv string
	}{
		{"headers too large", head + "id-1\r\n" + big + "\r\n", keepOpen, "id-1", errMalformed, ""},
		{"bad header after the ID", head + "id-2\r\nno colon here\r\n\r\n", keepOpen, "id-2", errMalformed, ""},
		{"reset in the headers", head + "id-3\r\nLambda-Runtime-Trace", resetConn, "id-3", ErrTransport, ""},
		{"closed mid-body", head + "id-4\r\nContent-Length: 10\r\n\r\nabc", closeConn, "id-4", ErrTransport, ""},
		{"headers too large before the ID", "HTTP/1.1 200 OK\r\n" + big + "Lambda-Runtime-Aws-Request-Id: id-5\r\n\r\n", keepOpen, "", errMalformed, ""},
		{"unusable ID", head + "a/b\r\n" + big + "\r\n", keepOpen, "", errMalformed, ""},
		{"reset after the invocation ID", head + "id-8\r\nLambda-Runtime-Invocation-Id: inv-8\r\nLambda-Runtime-Trace", resetConn, "id-8", ErrTransport, "inv-8"},
		{"closed mid-body with an invocation ID", head + "id-9\r\nLambda-Runtime-Invocation-Id: inv-9\r\nContent-Length: 10\r\n\r\nabc", closeConn, "id-9", ErrTransport, "inv-9"},
		{"error status", "HTTP/1.1 404 Not Found\r\nLambda-Runtime-Aws-Request-Id: id-6\r\nContent-Length: 1\r\n\r\nx", keepOpen, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
				if sc.id == 1 && sc.n == 0 {
					sc.bw.WriteString(tt.answer)
					return tt.act
				}
				sc.bw.Write(nextResponse("good", []byte("{}"), ""))
				return keepOpen
			})
			cn := srv.client(t).Conn()
			defer cn.Close()
			inv := Invocation{TraceID: "stale"}
			err := cn.Next(context.Background(), &inv)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if inv.RequestID != tt.wantID || inv.InvocationID != tt.wantInv || inv.TraceID != "" || inv.FunctionARN != "" || len(inv.Payload) != 0 {
				t.Fatalf("inv = %+v, want only request ID %q", inv, tt.wantID)
			}
			mustNext(t, cn, &inv)
			if inv.RequestID != "good" {
				t.Fatalf("next: %q", inv.RequestID)
			}
		})
	}
}

// watchStalls calls cn.CutIfStalled every few milliseconds until the test
// ends, as a runtime's watchdog does.
func watchStalls(t *testing.T, cn *Conn) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				cn.CutIfStalled()
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// TestStalledAnswer: a peer that stops mid-answer is cut off by
// CutIfStalled after StallTimeout, with a transport error; a long poll that
// has not begun is never cut off, nor is the connection after the answer.
func TestStalledAnswer(t *testing.T) {
	const stall = 100 * time.Millisecond
	t.Run("mid-answer", func(t *testing.T) {
		srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
			if sc.id == 1 {
				sc.bw.WriteString("HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: id-7\r\nContent-Length: 5\r\n\r\nab")
				sc.bw.Flush()
				sc.wait()
				return closeConn
			}
			sc.bw.Write(nextResponse("good", nil, ""))
			return keepOpen
		})
		cn := srv.client(t, WithStallTimeout(stall)).Conn()
		defer cn.Close()
		watchStalls(t, cn)
		var inv Invocation
		start := time.Now()
		err := cn.Next(context.Background(), &inv)
		if !errors.Is(err, ErrTransport) || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("err = %v, want a transport error for the stall", err)
		}
		if d := time.Since(start); d < stall || d > 20*stall {
			t.Fatalf("cut off after %v, want about %v", d, stall)
		}
		if inv.RequestID != "id-7" {
			t.Fatalf("request ID %q not kept", inv.RequestID)
		}
		mustNext(t, cn, &inv)
	})
	t.Run("long poll", func(t *testing.T) {
		srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
			if !r.is("GET", pathNext) {
				sc.bw.Write(accepted)
				return keepOpen
			}
			sc.waitFor(5 * stall)
			sc.bw.Write(nextResponse("late", nil, ""))
			return keepOpen
		})
		cn := srv.client(t, WithStallTimeout(stall)).Conn()
		defer cn.Close()
		watchStalls(t, cn)
		var inv Invocation
		mustNext(t, cn, &inv)
		if inv.RequestID != "late" {
			t.Fatalf("got %q", inv.RequestID)
		}
		// Not cut after the answer: a kept connection stays usable.
		time.Sleep(2 * stall)
		if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); err != nil {
			t.Fatal(err)
		}
		if srv.accepts.Load() != 1 {
			t.Fatalf("%d connections: the kept one was cut", srv.accepts.Load())
		}
	})
	if _, err := New("127.0.0.1:1", WithStallTimeout(-1)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative StallTimeout: %v", err)
	}
}
