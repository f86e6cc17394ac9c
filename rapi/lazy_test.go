package rapi

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lazyConn is a Conn of srv pipelined as a runtime's (pipe: polls
// queued, answers left to Next), that has read its first invocation into
// inv.
func lazyConn(t *testing.T, srv *testServer, inv *Invocation, opts ...Option) *Conn {
	t.Helper()
	cn := pipe(srv.client(t, opts...).Conn(), always)
	t.Cleanup(func() { cn.Close() })
	queuedNext(t, cn, inv)
	return cn
}

// respond posts a response to inv, which must return nil.
func respond(t *testing.T, cn *Conn, inv *Invocation) {
	t.Helper()
	if err := cn.Respond(context.Background(), inv, []byte("x"), "", queueOf(cn)); err != nil {
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

// With a lazy answer, a post returns once written; Next reads its answer
// first, reports a refusal as an *AnswerError that unwraps to what the
// post would have returned, and the poll queued behind it is read by the
// Next after that, without writing anything.
func TestLazyStatus(t *testing.T) {
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
				func() error { return cn.Respond(ctx, &inv, []byte("x"), "", queueOf(cn)) },
				func() error { return cn.Fail(ctx, &inv, "E", []byte("{}"), nil, queueOf(cn)) },
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
func TestLazyLowWaterMark(t *testing.T) {
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
func TestLazyShortRefusal(t *testing.T) {
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
func TestLazyStaleReadsAtOnce(t *testing.T) {
	t.Parallel()
	srv, _ := refusingServer(t, "HTTP/1.1 410 X\r\nContent-Length: 0\r\n\r\n")
	var inv Invocation
	cn := lazyConn(t, srv, &inv)
	cn.pipe.fresh = 20 * time.Millisecond
	time.Sleep(2 * cn.pipe.fresh)
	if err := cn.Respond(context.Background(), &inv, []byte("x"), "", queueOf(cn)); !errors.Is(err, errGone) {
		t.Fatalf("Respond = %v, want the 410 at once", err)
	}
	queuedNext(t, cn, &inv)
}

// postLog is a scripted Runtime API for the tests of a lazy answer whose
// connection ends: it records every request whole, and lets script answer
// each post (n counts posts from 1).
type postLog struct {
	mu    sync.Mutex
	posts []string // request line, headers and body of each post
	conns []int64  // the connection of each post
	ahead []int    // bytes that had arrived behind each post
}

func (l *postLog) server(t *testing.T, script func(sc *srvConn, n int) action) *testServer {
	return newTestServer(t, func(sc *srvConn, r *srvReq) action {
		if r.is("GET", pathNext) {
			sc.bw.Write(nextResponse("id-"+strconv.FormatInt(sc.srv.requests.Load(), 10), []byte(`{}`), ""))
			return keepOpen
		}
		l.mu.Lock()
		l.posts = append(l.posts, string(r.line)+"\r\n"+string(r.header)+"\r\n"+string(r.body))
		l.conns = append(l.conns, sc.id)
		l.ahead = append(l.ahead, sc.ahead)
		n := len(l.posts)
		l.mu.Unlock()
		return script(sc, n)
	})
}

func (l *postLog) get() (posts []string, conns []int64, ahead []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.posts), slices.Clone(l.conns), slices.Clone(l.ahead)
}

// lazyPosts are the answers a lazy post may be: small ones go out with
// their headers in one write (the body copied), larger ones and an X-Ray
// cause from the caller's slices (writev).
func lazyPosts() []struct {
	name string
	post func(cn *Conn, inv *Invocation) error
} {
	big := bytes.Repeat([]byte("0123456789abcdef"), 4<<10)
	ctx := context.Background()
	return []struct {
		name string
		post func(cn *Conn, inv *Invocation) error
	}{
		{"response", func(cn *Conn, inv *Invocation) error {
			return cn.Respond(ctx, inv, []byte(`"ok"`), "application/json", queueOf(cn))
		}},
		{"response over 4 KiB", func(cn *Conn, inv *Invocation) error { return cn.Respond(ctx, inv, big, "", queueOf(cn)) }},
		{"error", func(cn *Conn, inv *Invocation) error {
			return cn.Fail(ctx, inv, "E", []byte(`{"errorMessage":"x"}`), nil, queueOf(cn))
		}},
		{"error with a cause", func(cn *Conn, inv *Invocation) error {
			return cn.Fail(ctx, inv, "E", big, []byte(`{"cause":1}`), queueOf(cn))
		}},
	}
}

// With a lazy answer, a post whose connection ends (closed or reset) after
// the server read it whole and before any byte of its answer is sent once
// more, byte for byte, on a new connection and without a poll behind it, by
// the Next that reads its answer; that Next then polls afresh there. The
// caller's slices are read again, so they must not change until then.
func TestLazyResentAfterConnEnds(t *testing.T) {
	for _, end := range []struct {
		name string
		a    action
	}{{"closed", closeConn}, {"reset", resetConn}} {
		for _, p := range lazyPosts() {
			t.Run(end.name+"/"+p.name, func(t *testing.T) {
				var l postLog
				srv := l.server(t, func(sc *srvConn, n int) action {
					if n == 1 {
						return end.a // no answer
					}
					sc.bw.Write(accepted)
					return keepOpen
				})
				var inv Invocation
				cn := lazyConn(t, srv, &inv)
				if err := p.post(cn, &inv); err != nil {
					t.Fatalf("post = %v, want nil (the answer is read by Next)", err)
				}
				queuedNext(t, cn, &inv)
				posts, conns, ahead := l.get()
				if len(posts) != 2 || posts[0] != posts[1] || conns[0] != 1 || conns[1] != 2 || ahead[1] != 0 {
					t.Fatalf("posts on connections %v (%v bytes behind), the same: %v", conns, ahead, len(posts) == 2 && posts[0] == posts[1])
				}
				if inv.RequestID != "id-4" || srv.accepts.Load() != 2 || srv.requests.Load() != 4 {
					t.Fatalf("Next got %q; accepts %d, requests %d", inv.RequestID, srv.accepts.Load(), srv.requests.Load())
				}
			})
		}
	}
}

// The post sent again is refused (the server had taken the first one), or
// its connection ends too: Next returns an *AnswerError saying it was sent
// again, with the second answer's error, and the Next after it polls
// afresh. A post is sent again once, never more.
func TestLazyResentRefused(t *testing.T) {
	body := `{"errorMessage":"Invalid request ID"}`
	refusal := "HTTP/1.1 400 Bad Request\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	for _, tt := range []struct {
		name  string
		again action // -1: refused with 400
		check func(err error) bool
	}{
		{"400", -1, func(err error) bool {
			var se *StatusError
			return errors.As(err, &se) && se.Code == 400 && string(se.Body) == body
		}},
		{"reset again", resetConn, func(err error) bool { return errors.Is(err, ErrTransport) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l postLog
			srv := l.server(t, func(sc *srvConn, n int) action {
				switch {
				case n == 1:
					return resetConn
				case n == 2 && tt.again >= 0:
					return tt.again
				}
				sc.bw.WriteString(refusal)
				return keepOpen
			})
			var inv Invocation
			cn := lazyConn(t, srv, &inv)
			respond(t, cn, &inv)
			var ae *AnswerError
			err := cn.Next(context.Background(), &inv)
			if !errors.As(err, &ae) || !ae.Resent || ae.Op != opResponse || !tt.check(err) || inv.RequestID != "" {
				t.Fatalf("Next = %v (%+v), request %q", err, ae, inv.RequestID)
			}
			queuedNext(t, cn, &inv)
			if posts, _, _ := l.get(); len(posts) != 2 || inv.RequestID == "" {
				t.Fatalf("%d posts, then %q", len(posts), inv.RequestID)
			}
		})
	}
}

// A context that fires while Next waits for a lazy answer breaks nothing:
// Next returns its error, and the answer stays to be read, with the poll
// behind it, by ReadAnswer (which leaves the poll queued) or the next
// Next. A Conn with nothing left to read answers ReadAnswer at once.
func TestLazyInterruptedKeepsAnswer(t *testing.T) {
	release := make(chan struct{})
	srv, seen := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		if r.is("POST", pathInvocation+"id-1/response") {
			select { // the answer comes after the interruption
			case <-release:
			case <-sc.srv.quit:
			}
			sc.bw.Write(accepted)
			return keepOpen, true
		}
		return 0, false
	})
	var rec recorder
	var inv Invocation
	cn := lazyConn(t, srv, &inv, rec.option())
	if err := cn.ReadAnswer(context.Background()); err != nil {
		t.Fatalf("ReadAnswer with nothing left = %v", err)
	}
	respond(t, cn, &inv)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if err := cn.Next(ctx, &inv); !errors.Is(err, context.Canceled) || errors.As(err, new(*AnswerError)) {
		t.Fatalf("Next = %v, want the context's error alone", err)
	}
	if !cn.pipe.queued || cn.pipe.pending == "" {
		t.Fatalf("queued %v, pending %q after the interruption", cn.pipe.queued, cn.pipe.pending)
	}
	close(release)
	before := rec.count()
	stop := time.AfterFunc(10*time.Second, func() { cn.Close() })
	defer stop.Stop()
	if err := cn.ReadAnswer(context.Background()); err != nil {
		t.Fatalf("ReadAnswer = %v", err)
	}
	if err := cn.ReadAnswer(context.Background()); err != nil || !cn.pipe.queued {
		t.Fatalf("ReadAnswer again = %v, queued %v", err, cn.pipe.queued)
	}
	queuedNext(t, cn, &inv)
	if w := rec.since(before); len(w) != 0 || inv.RequestID != "id-3" {
		t.Fatalf("writes %q, got %q", w, inv.RequestID)
	}
	if got := seen(); len(got) != 3 || srv.accepts.Load() != 1 {
		t.Fatalf("accepts %d, requests %+v", srv.accepts.Load(), got)
	}
}

// A post on a connection that has answered no poll yet (here the /error
// for an invocation whose /next answer broke off) reads its answer at
// once: the caller learns what became of it without waiting for a Next.
func TestLazyNewConnReadsAtOnce(t *testing.T) {
	srv, _ := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		switch {
		case r.is("GET", pathNext) && sc.id == 1:
			sc.bw.Write(nextResponse("cut", []byte(`{"long":"payload"}`), "")[:200])
			return closeConn, true
		case !r.is("GET", pathNext):
			sc.bw.WriteString("HTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n")
			return keepOpen, true
		}
		return 0, false
	})
	cn := pipe(srv.client(t).Conn(), always)
	t.Cleanup(func() { cn.Close() })
	var inv Invocation
	if err := cn.Next(context.Background(), &inv); !errors.Is(err, ErrTransport) || inv.RequestID != "cut" {
		t.Fatalf("Next = %v, request %q; want a broken answer with its request ID", err, inv.RequestID)
	}
	if err := cn.Fail(context.Background(), &inv, "E", []byte("{}"), nil, queueOf(cn)); !errors.Is(err, errGone) {
		t.Fatalf("Fail = %v, want the 410 at once", err)
	}
	queuedNext(t, cn, &inv)
}
