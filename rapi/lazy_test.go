package rapi

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// lazyConn is a Conn of srv with QueueNext and LazyAnswer on, that has
// read its first invocation into inv.
func lazyConn(t *testing.T, srv *testServer, inv *Invocation, opts ...Option) *Conn {
	t.Helper()
	cn := queuedConn(t, srv, inv, opts...)
	cn.LazyAnswer(true)
	return cn
}

// respond posts a response to inv, which must return nil.
func respond(t *testing.T, cn *Conn, inv *Invocation) {
	t.Helper()
	if err := cn.Respond(context.Background(), inv, []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
}

// readsQueued reads the next invocation into inv and returns its ID.
func readsQueued(t *testing.T, cn *Conn, inv *Invocation) string {
	t.Helper()
	queuedNext(t, cn, inv)
	return inv.RequestID
}

// refusingServer answers /next as logServer does and every post with resp.
func refusingServer(t *testing.T, resp string) (*testServer, func() []seenReq) {
	return logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		if r.is("GET", pathNext) {
			return 0, false
		}
		sc.bw.WriteString(resp)
		return keepOpen, true
	})
}

// With LazyAnswer, a post returns once written; Next reads its answer
// first, reports a refusal as an *AnswerError that unwraps to what the
// post would have returned, and the poll queued behind it is read by the
// Next after that, without writing anything.
func TestLazyAnswerStatus(t *testing.T) {
	for _, code := range []int{400, 410, 413, 500} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			body := `{"errorMessage":"no"}`
			resp := "HTTP/1.1 " + strconv.Itoa(code) + " X\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
			srv, seen := refusingServer(t, resp)
			var rec recorder
			var inv Invocation
			cn := lazyConn(t, srv, &inv, rec.option())
			ctx := context.Background()
			posts := []func() error{
				func() error { return cn.Respond(ctx, &inv, []byte("x"), "") },
				func() error { return cn.Fail(ctx, &inv, "E", []byte("{}"), nil) },
			}
			for i, post := range posts {
				if err := post(); err != nil {
					t.Fatalf("post %d: %v, want nil (the answer is read by Next)", i, err)
				}
				var ae *AnswerError
				var se *StatusError
				err := cn.Next(ctx, &inv)
				if !errors.As(err, &ae) || !errors.As(err, &se) || se.Code != code || string(se.Body) != body ||
					errors.Is(err, ErrRuntimeAPI) != (code >= 500) || inv.RequestID != "" {
					t.Fatalf("post %d: Next = %v (request %q)", i, err, inv.RequestID)
				}
				// The queued poll, read without a write.
				if n := rec.count(); readsQueued(t, cn, &inv) != "id-"+strconv.Itoa(2*i+3) || rec.count() != n {
					t.Fatalf("post %d: got %q, %d writes", i, inv.RequestID, rec.count()-n)
				}
			}
			if got := seen(); len(got) != 5 || srv.accepts.Load() != 1 {
				t.Fatalf("accepts %d, requests %+v", srv.accepts.Load(), got)
			}
		})
	}
}

// The size of an accepted answer is learned, and the low-water mark set
// just above it while the answer waits for Next; it is back to 1 once the
// next answer begins, so that a large /next body is read to its end.
func TestLazyAnswerLowWaterMark(t *testing.T) {
	big := bytes.Repeat([]byte("y"), 1<<20+77)
	var posts atomic.Int64
	srv, _ := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		if r.is("GET", pathNext) && posts.Load() >= 2 {
			sc.bw.Write(nextResponse("big", big, ""))
			return keepOpen, true
		}
		if !r.is("GET", pathNext) {
			posts.Add(1)
		}
		return 0, false
	})
	var inv Invocation
	cn := lazyConn(t, srv, &inv)
	for i := range 2 {
		respond(t, cn, &inv)
		if i == 1 {
			if got := rcvlowat(t, cn); got != len(accepted)+1 {
				t.Fatalf("SO_RCVLOWAT %d while the answer waits, want %d", got, len(accepted)+1)
			}
		}
		queuedNext(t, cn, &inv)
		if got := rcvlowat(t, cn); got != 1 {
			t.Fatalf("SO_RCVLOWAT %d after Next, want 1", got)
		}
	}
	if inv.RequestID != "big" || !bytes.Equal(inv.Payload, big) {
		t.Fatalf("request %q, %d bytes", inv.RequestID, len(inv.Payload))
	}
}

// An answer smaller than the learned size of an accepted one does not
// reach the low-water mark: it is still read within lazyWake, though no
// invocation follows it (without that bound, Next would wait until the
// test closes the Conn after 10 s).
func TestLazyAnswerShortRefusal(t *testing.T) {
	short := "HTTP/1.1 500 X\r\nContent-Length: 0\r\n\r\n"
	if len(short) >= len(accepted) {
		t.Fatal("test broken: the refusal must be shorter than the 202")
	}
	var posts atomic.Int64
	srv, _ := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		switch {
		case r.is("GET", pathNext) && posts.Load() >= 2:
			return keepOpen, true // the poll is never answered
		case r.is("GET", pathNext):
			return 0, false
		case posts.Add(1) == 2:
			// Late, so that the runtime waits for it in the poller,
			// where the low-water mark applies (a read finds what is
			// there whatever the mark).
			time.Sleep(30 * time.Millisecond)
			sc.bw.WriteString(short)
			return keepOpen, true
		}
		return 0, false
	})
	var inv Invocation
	cn := lazyConn(t, srv, &inv)
	respond(t, cn, &inv)
	queuedNext(t, cn, &inv) // learns the size of the 202
	respond(t, cn, &inv)
	ctx := context.Background()
	stop := time.AfterFunc(10*time.Second, func() { cn.Close() })
	defer stop.Stop()
	var ae *AnswerError
	if err := cn.Next(ctx, &inv); !errors.As(err, &ae) || !errors.Is(err, ErrRuntimeAPI) {
		t.Fatalf("Next = %v, want the 500 as an *AnswerError", err)
	}
}

// A post made long after the poll before it was answered reads its answer
// at once: the server may have closed the idle connection, and only the
// answer tells.
func TestLazyAnswerStaleReadsAtOnce(t *testing.T) {
	t.Parallel()
	srv, _ := refusingServer(t, "HTTP/1.1 410 X\r\nContent-Length: 0\r\n\r\n")
	var inv Invocation
	cn := lazyConn(t, srv, &inv)
	cn.fresh = 20 * time.Millisecond
	time.Sleep(2 * cn.fresh)
	if err := cn.Respond(context.Background(), &inv, []byte("x"), ""); !errors.Is(err, errGone) {
		t.Fatalf("Respond = %v, want the 410 at once", err)
	}
	queuedNext(t, cn, &inv)
}
