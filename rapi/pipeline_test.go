package rapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// recorder wraps every connection a Client dials and keeps a copy of each
// Write call, so that tests see how requests were split into writes. (It
// hides writev from net.Buffers, which then writes part by part.)
type recorder struct {
	mu     sync.Mutex
	writes [][]byte
}

type recConn struct {
	net.Conn
	r *recorder
}

func (c *recConn) Write(p []byte) (int, error) {
	c.r.mu.Lock()
	c.r.writes = append(c.r.writes, bytes.Clone(p))
	c.r.mu.Unlock()
	return c.Conn.Write(p)
}

func (r *recorder) option() Option {
	return wrapDial(func(nc net.Conn) net.Conn { return &recConn{Conn: nc, r: r} })
}

// since returns the writes made after the first n.
func (r *recorder) since(n int) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.writes[n:]...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.writes)
}

// seenReq is what the scripted server saw of one request.
type seenReq struct {
	conn  int64
	n     int
	line  string
	body  string
	ahead int
}

// logServer logs every request, then lets custom handle it when custom says
// so; otherwise it answers /next with an invocation whose request ID is "id-"
// and the server's request count, and posts with 202.
func logServer(t *testing.T, custom func(sc *srvConn, r *srvReq) (action, bool)) (*testServer, func() []seenReq) {
	var (
		mu  sync.Mutex
		log []seenReq
	)
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		mu.Lock()
		log = append(log, seenReq{sc.id, sc.n, string(r.line), string(r.body), sc.ahead})
		mu.Unlock()
		if custom != nil {
			if act, ok := custom(sc, r); ok {
				return act
			}
		}
		if r.is("GET", pathNext) {
			sc.bw.Write(nextResponse("id-"+strconv.FormatInt(sc.srv.requests.Load(), 10), []byte(`{}`), ""))
			return keepOpen
		}
		sc.bw.Write(accepted)
		return keepOpen
	})
	return srv, func() []seenReq {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenReq(nil), log...)
	}
}

// queuedNext is mustNext with a bound, so that a poll wrongly kept queued
// fails the test instead of hanging it. The bound closes the Conn rather
// than using a context: a context cancelled after the call would interrupt
// the idle Conn and change what the next call does.
func queuedNext(t *testing.T, cn *Conn, inv *Invocation) {
	t.Helper()
	stop := time.AfterFunc(10*time.Second, func() { cn.Close() })
	defer stop.Stop()
	if err := cn.Next(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
}

// queuedConn returns a Conn of srv with queued polls (queueOnly), after
// its first Next (an ordinary GET: nothing is queued yet) into inv.
func queuedConn(t *testing.T, srv *testServer, inv *Invocation, opts ...Option) *Conn {
	t.Helper()
	cn := srv.client(t, opts...).Conn()
	t.Cleanup(func() { cn.Close() })
	queueOnly(cn)
	queuedNext(t, cn, inv)
	return cn
}

const (
	lineNext = "GET " + pathNext + " HTTP/1.1"
	linePost = "POST " + pathInvocation
)

// waitRequests waits until the server has read n requests.
func waitRequests(t *testing.T, srv *testServer, n int64) {
	t.Helper()
	for start := time.Now(); srv.requests.Load() < n; time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("requests = %d, want %d", srv.requests.Load(), n)
		}
	}
}

// waitSeen waits until the server has logged request n (from 0) of
// connection conn. It logs each connection's requests in order, but two
// connections' in any order, so a check waits for each it needs.
func waitSeen(t *testing.T, seen func() []seenReq, conn int64, n int) {
	t.Helper()
	for start := time.Now(); len(linesOn(seen(), conn)) <= n; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("request %d on connection %d never came: %+v", n, conn, seen())
		}
	}
}

// linesOn returns the request lines the server logged on connection conn.
func linesOn(got []seenReq, conn int64) []string {
	var lines []string
	for _, r := range got {
		if r.conn == conn {
			lines = append(lines, r.line)
		}
	}
	return lines
}

func TestQueuedPollSmallPostOneWrite(t *testing.T) {
	srv, seen := logServer(t, nil)
	var rec recorder
	var inv Invocation
	cn := queuedConn(t, srv, &inv, rec.option())
	c := cn.c
	ctx := context.Background()
	if w := rec.since(0); len(w) != 1 || !bytes.Equal(w[0], c.pre.next) {
		t.Fatalf("first Next wrote %q", w)
	}
	posts := []struct {
		name, suffix string
		do           func(id string) error
	}{
		{"respond", "/response", func(id string) error {
			return cn.Respond(ctx, &Invocation{RequestID: id}, []byte(`"ok"`), "application/json", queueOf(cn))
		}},
		{"fail", "/error", func(id string) error {
			return cn.Fail(ctx, &Invocation{RequestID: id}, "Handler.Error", []byte(`{"errorMessage":"x"}`), []byte(`{"c":1}`), queueOf(cn)) // the cause takes writev
		}},
		{"respond empty", "/response", func(id string) error { return cn.Respond(ctx, &Invocation{RequestID: id}, nil, "", queueOf(cn)) }},
	}
	for i, p := range posts {
		before := rec.count()
		id := inv.RequestID
		if err := p.do(id); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		w := rec.since(before)
		if p.name == "fail" { // mid part: writev, part by part here; the GET is the last part
			if len(w) < 2 || !bytes.Equal(w[len(w)-1], c.pre.next) || !bytes.HasPrefix(w[0], []byte(linePost+id+p.suffix)) {
				t.Fatalf("%s: writes %q", p.name, w)
			}
		} else {
			if len(w) != 1 || !bytes.HasPrefix(w[0], []byte(linePost+id+p.suffix+" HTTP/1.1\r\n")) ||
				!bytes.HasSuffix(w[0], c.pre.next) || bytes.Count(w[0], []byte("HTTP/1.1\r\n")) != 2 {
				t.Fatalf("%s: %d writes %q, want the POST and the GET in one", p.name, len(w), w)
			}
		}
		before = rec.count()
		queuedNext(t, cn, &inv)
		if w := rec.since(before); len(w) != 0 {
			t.Fatalf("%s: Next wrote %q with a poll queued", p.name, w)
		}
		if want := "id-" + strconv.Itoa(2*i+3); inv.RequestID != want {
			t.Fatalf("%s: Next got %q, want %q (the queued poll's answer)", p.name, inv.RequestID, want)
		}
	}
	got := seen()
	if len(got) != 1+2*len(posts) {
		t.Fatalf("server saw %d requests: %+v", len(got), got)
	}
	for i, r := range got {
		if r.conn != 1 || r.n != i {
			t.Fatalf("request %d: %+v, want all on connection 1 in order", i, r)
		}
		if i%2 == 0 {
			if r.line != lineNext {
				t.Fatalf("request %d: %q, want GET /next", i, r.line)
			}
			continue
		}
		if !strings.HasPrefix(r.line, linePost) {
			t.Fatalf("request %d: %q, want a POST", i, r.line)
		}
		// The GET had arrived with the POST: one write, one read.
		if p := posts[i/2]; p.name != "fail" && r.ahead != len(c.pre.next) {
			t.Errorf("%s: %d bytes had arrived behind the POST, want the %d of the GET", p.name, r.ahead, len(c.pre.next))
		}
	}
}

func TestQueuedPollLargePostWritev(t *testing.T) {
	srv, seen := logServer(t, nil)
	c := srv.client(t) // a real *net.TCPConn: writev
	cn := c.Conn()
	defer cn.Close()
	queueOnly(cn)
	ctx := context.Background()
	big := bytes.Repeat([]byte("b"), 1<<20)
	cause := bytes.Repeat([]byte("c"), 10<<10)
	var inv Invocation
	queuedNext(t, cn, &inv)
	if err := cn.Respond(ctx, &inv, big, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	waitRequests(t, srv, 3) // the server read the queued GET by itself
	queuedNext(t, cn, &inv)
	if err := cn.Fail(ctx, &inv, "E", big, cause, queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	queuedNext(t, cn, &inv)
	got := seen()
	if len(got) != 5 || srv.requests.Load() != 5 || srv.accepts.Load() != 1 {
		t.Fatalf("server saw %d requests, %d accepts: %+v", len(got), srv.accepts.Load(), got)
	}
	for i, r := range got {
		wantLine := lineNext
		switch i {
		case 1:
			wantLine = linePost + "id-1/response HTTP/1.1"
		case 3:
			wantLine = linePost + "id-3/error HTTP/1.1"
		}
		if r.conn != 1 || r.n != i || r.line != wantLine {
			t.Fatalf("request %d: %+v, want %q on connection 1", i, r, wantLine)
		}
		if i%2 == 1 && r.body != string(big) {
			t.Fatalf("request %d: body of %d bytes", i, len(r.body))
		}
	}
}

func TestQueuedPollKeepAlive(t *testing.T) {
	srv := newTestServer(t, apiHandler([]byte(`{"n":1}`)))
	cn := srv.client(t).Conn()
	defer cn.Close()
	queueOnly(cn)
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
	if err := cn.Next(ctx, &inv); err != nil || string(inv.Payload) != `{"n":1}` {
		t.Fatalf("last next: %v %q", err, inv.Payload)
	}
	// One GET of its own, then 1000 times a POST with its queued GET.
	if a, r := srv.accepts.Load(), srv.requests.Load(); a != 1 || r != 2001 {
		t.Fatalf("accepts = %d, requests = %d; want 1, 2001", a, r)
	}
}

// A post refused with a well-framed non-2xx on a kept connection: the server
// goes on to the queued GET, so the poll stays queued.
func TestQueuedPollStatusKeepsPoll(t *testing.T) {
	for _, code := range []int{400, 410, 413, 500} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			body := `{"errorMessage":"no"}`
			resp := "HTTP/1.1 " + strconv.Itoa(code) + " X\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
			srv, seen := refusingServer(t, resp)
			var rec recorder
			var inv Invocation
			cn := queuedConn(t, srv, &inv, rec.option())
			ctx := context.Background()
			posts := []func() error{
				func() error { return cn.Respond(ctx, &inv, []byte("x"), "", queueOf(cn)) },
				func() error { return cn.Fail(ctx, &inv, "E", []byte("{}"), nil, queueOf(cn)) },
			}
			for i, post := range posts {
				var se *StatusError
				if err := post(); !errors.As(err, &se) || se.Code != code || string(se.Body) != body {
					t.Fatalf("post %d: err = %v", i, err)
				}
				before := rec.count()
				queuedNext(t, cn, &inv)
				if w := rec.since(before); len(w) != 0 {
					t.Fatalf("post %d: Next wrote %q", i, w)
				}
				if want := "id-" + strconv.Itoa(2*i+3); inv.RequestID != want {
					t.Fatalf("post %d: got %q, want %q", i, inv.RequestID, want)
				}
			}
			if got := seen(); len(got) != 5 || srv.accepts.Load() != 1 || got[4].line != lineNext || got[4].n != 4 {
				t.Fatalf("accepts %d, requests %+v", srv.accepts.Load(), got)
			}
		})
	}
}

// A post answered with Connection: close (or an answer that ends the
// connection): the server never reads the GET behind it, so the Conn
// forgets it and Next redials with a fresh GET. With a lazy answer the same
// holds once Next has read the answer: a refusal is returned first, a
// success is followed by the fresh GET within the same Next.
func TestQueuedPollConnectionCloseForgets(t *testing.T) {
	tests := []struct {
		name, resp string
		code       int
	}{
		{"202 close", "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 0},
		{"410 close", "HTTP/1.1 410 Gone\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 410},
		{"http/1.0", "HTTP/1.0 202 Accepted\r\nContent-Length: 2\r\n\r\nok", 0},
		{"body until close", "HTTP/1.1 202 Accepted\r\n\r\nok", 0},
	}
	for _, lazy := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/lazy=%v", tt.name, lazy), func(t *testing.T) {
				srv, seen := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
					if r.is("GET", pathNext) {
						return 0, false
					}
					sc.bw.WriteString(tt.resp)
					return closeConn, true // the GET behind it is never read
				})
				var rec recorder
				var inv Invocation
				cn := queuedConn(t, srv, &inv, rec.option())
				cn.pipe.lazy = lazy
				err := cn.Respond(context.Background(), &inv, []byte("x"), "", queueOf(cn))
				before := rec.count()
				if lazy {
					if err != nil {
						t.Fatalf("lazy Respond = %v, want nil (the answer is read by Next)", err)
					}
					if tt.code != 0 {
						var ae *AnswerError
						if err = cn.Next(context.Background(), &inv); !errors.As(err, &ae) {
							t.Fatalf("Next = %v, want the post's *AnswerError", err)
						}
					}
				}
				if tt.code == 0 && err != nil {
					t.Fatal(err)
				}
				var se *StatusError
				if tt.code != 0 && (!errors.As(err, &se) || se.Code != tt.code) {
					t.Fatalf("err = %v", err)
				}
				queuedNext(t, cn, &inv)
				if w := rec.since(before); len(w) != 1 || !bytes.Equal(w[0], cn.c.pre.next) {
					t.Fatalf("Next wrote %q, want a fresh GET", w)
				}
				got := seen()
				if len(got) != 3 || srv.accepts.Load() != 2 || got[2].conn != 2 || got[2].n != 0 || got[2].line != lineNext {
					t.Fatalf("accepts %d, requests %+v", srv.accepts.Load(), got)
				}
			})
		}
	}
}

// The connection ends after the POST was answered, once the server has read
// the queued GET: the server may have registered it, so Next must not send
// it again by itself. It reports ErrTransport; the call after redials.
func TestQueuedPollConnLostAfterAnswer(t *testing.T) {
	for _, act := range []struct {
		name string
		a    action
	}{{"reset", resetConn}, {"close", closeConn}} {
		t.Run(act.name, func(t *testing.T) {
			release := make(chan struct{})
			srv, seen := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
				if sc.id == 1 && sc.n == 2 { // the queued GET: read, never answered
					<-release
					return act.a, true
				}
				return 0, false
			})
			var rec recorder
			var inv Invocation
			cn := queuedConn(t, srv, &inv, rec.option())
			if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); err != nil {
				t.Fatal(err)
			}
			close(release)
			before := rec.count()
			err := cn.Next(context.Background(), &inv)
			if !errors.Is(err, ErrTransport) {
				t.Fatalf("err = %v", err)
			}
			if w := rec.since(before); len(w) != 0 || srv.accepts.Load() != 1 {
				t.Fatalf("the queued GET was resent: writes %q, accepts %d", w, srv.accepts.Load())
			}
			queuedNext(t, cn, &inv)
			if w := rec.since(before); len(w) != 1 || !bytes.Equal(w[0], cn.c.pre.next) {
				t.Fatalf("writes %q, want one fresh GET", w)
			}
			if got := seen(); len(got) != 4 || got[3].conn != 2 || got[3].line != lineNext || srv.accepts.Load() != 2 {
				t.Fatalf("accepts %d, requests %+v", srv.accepts.Load(), got)
			}
		})
	}
}

// The connection is reset before the POST's answer: the GET is dropped with
// it, and Next sends a fresh one on a new connection.
func TestQueuedPollResetBeforeAnswer(t *testing.T) {
	srv, seen := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		return resetConn, sc.id == 1 && sc.n == 1 // the POST
	})
	var inv Invocation
	cn := queuedConn(t, srv, &inv)
	if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); !errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v", err)
	}
	if cn.pipe.queued {
		t.Fatal("a poll is still queued on a dropped connection")
	}
	queuedNext(t, cn, &inv)
	if got := seen(); len(got) != 3 || got[2].conn != 2 || got[2].n != 0 || got[2].line != lineNext {
		t.Fatalf("requests %+v", got)
	}
}

// A context that fires while Next waits for the queued answer interrupts it
// as any Next: the connection, and the poll with it, are dropped.
func TestQueuedPollCancelWhileReadingQueued(t *testing.T) {
	srv, seen := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		if sc.id == 1 && sc.n == 2 { // the queued GET: a long poll
			sc.wait()
			return closeConn, true
		}
		return 0, false
	})
	var rec recorder
	var inv Invocation
	cn := queuedConn(t, srv, &inv, rec.option())
	if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	before := rec.count()
	start := time.Now()
	err := cn.Next(ctx, &inv)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if w := rec.since(before); len(w) != 0 || cn.pipe.queued {
		t.Fatalf("writes %q, queued %v", w, cn.pipe.queued)
	}
	queuedNext(t, cn, &inv)
	waitSeen(t, seen, 1, 2) // the abandoned poll, maybe logged after the fresh one
	if got := seen(); len(got) != 4 || len(linesOn(got, 1)) != 3 || !slices.Equal(linesOn(got, 2), []string{lineNext}) {
		t.Fatalf("requests %+v", got)
	}
}

// A context that fires while the Conn is idle breaks no I/O: the connection
// keeps its queued poll rather than abandoning it.
func TestQueuedPollIdleContextKeepsPoll(t *testing.T) {
	srv, seen := logServer(t, nil)
	var rec recorder
	var inv Invocation
	cn := queuedConn(t, srv, &inv, rec.option())
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		if err := cn.Respond(ctx, &inv, nil, "", queueOf(cn)); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		cancel()
		for start := time.Now(); !cn.interrupted.Load(); time.Sleep(100 * time.Microsecond) {
			if time.Since(start) > 5*time.Second {
				t.Fatal("the context's callback did not run")
			}
		}
		// The same done context fails at once and leaves the poll queued.
		if err := cn.Next(ctx, &inv); !errors.Is(err, context.Canceled) || !cn.pipe.queued {
			t.Fatalf("%d: err = %v, queued %v", i, err, cn.pipe.queued)
		}
		before := rec.count()
		queuedNext(t, cn, &inv)
		if w := rec.since(before); len(w) != 0 {
			t.Fatalf("%d: Next wrote %q", i, w)
		}
	}
	if got := seen(); len(got) != 41 || srv.accepts.Load() != 1 {
		t.Fatalf("accepts %d, %d requests", srv.accepts.Load(), len(got))
	}
}

func TestQueuedPollClose(t *testing.T) {
	srv, _ := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		if sc.n == 2 {
			sc.wait()
			return closeConn, true
		}
		return 0, false
	})
	cn := srv.client(t).Conn()
	queueOnly(cn)
	var inv Invocation
	queuedNext(t, cn, &inv)
	if err := cn.Respond(context.Background(), &inv, nil, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cn.Next(context.Background(), &inv) }()
	time.Sleep(30 * time.Millisecond)
	cn.Close()
	if err := <-done; !errors.Is(err, errClosed) {
		t.Fatalf("err = %v", err)
	}
	if err := cn.Next(context.Background(), &inv); !errors.Is(err, errClosed) || cn.pipe.queued {
		t.Fatalf("err = %v, queued %v", err, cn.pipe.queued)
	}
}

// Posts that fail validation write nothing and queue nothing; so do posts
// made while a poll is queued.
func TestQueuedPollNothingSentOnInvalidPost(t *testing.T) {
	srv, seen := logServer(t, nil)
	var rec recorder
	cn := srv.client(t, rec.option()).Conn()
	defer cn.Close()
	queueOnly(cn)
	ctx := context.Background()
	bad := func() {
		t.Helper()
		for _, id := range []string{"", "a/b", "a b", "a\r\nb", ".."} {
			if err := cn.Respond(ctx, &Invocation{RequestID: id}, nil, "", queueOf(cn)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: err = %v", id, err)
			}
			if err := cn.Fail(ctx, &Invocation{RequestID: id}, "E", nil, nil, queueOf(cn)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: err = %v", id, err)
			}
		}
		if err := cn.Respond(ctx, &Invocation{RequestID: "id"}, nil, "bad\r\nvalue", queueOf(cn)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	}
	bad()
	if rec.count() != 0 || cn.pipe.queued {
		t.Fatalf("writes %d, queued %v", rec.count(), cn.pipe.queued)
	}
	var inv Invocation
	queuedNext(t, cn, &inv) // a GET of its own: nothing was queued
	if w := rec.since(0); len(w) != 1 || !bytes.Equal(w[0], cn.c.pre.next) {
		t.Fatalf("writes %q", w)
	}
	bad()
	if err := cn.Respond(ctx, &inv, nil, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	before := rec.count()
	bad()
	if err := cn.Respond(ctx, &inv, nil, "", queueOf(cn)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("post with a poll queued: err = %v", err)
	}
	if err := cn.Fail(ctx, &inv, "E", nil, nil, queueOf(cn)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("post with a poll queued: err = %v", err)
	}
	if w := rec.since(before); len(w) != 0 || !cn.pipe.queued {
		t.Fatalf("writes %q, queued %v", w, cn.pipe.queued)
	}
	queuedNext(t, cn, &inv)
	if got, w := seen(), rec.since(before); len(got) != 3 || len(w) != 0 {
		t.Fatalf("requests %+v, writes %q", got, w)
	}
}

// The queued answer goes through the same checks as any /next answer.
func TestQueuedPollQueuedAnswerChecks(t *testing.T) {
	payload := bytes.Repeat([]byte("p"), 100<<10)
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		switch {
		case !r.is("GET", pathNext):
			sc.bw.Write(accepted)
		case sc.n == 2:
			sc.bw.Write(nextResponse("big-id", payload, ""))
		case sc.n == 4:
			sc.bw.WriteString("HTTP/1.1 500 Internal\r\nContent-Length: 2\r\n\r\n{}")
		default:
			sc.bw.Write(nextResponse("small", []byte("ok"), ""))
		}
		return keepOpen
	})
	var inv Invocation
	cn := queuedConn(t, srv, &inv, WithMaxRequestBytes(64<<10))
	ctx := context.Background()
	if err := cn.Respond(ctx, &inv, nil, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	if err := cn.Next(ctx, &inv); !errors.Is(err, ErrPayloadTooLarge) || inv.RequestID != "big-id" {
		t.Fatalf("err = %v, id %q", err, inv.RequestID)
	}
	if err := cn.Fail(ctx, &inv, "Runtime.RequestTooLarge", []byte("{}"), nil, queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	if err := cn.Next(ctx, &inv); !errors.Is(err, ErrRuntimeAPI) {
		t.Fatalf("err = %v", err)
	}
	queuedNext(t, cn, &inv) // a fresh GET: the 500 consumed the queued poll
	if inv.RequestID != "small" || srv.accepts.Load() != 1 || srv.requests.Load() != 6 {
		t.Fatalf("id %q accepts %d requests %d", inv.RequestID, srv.accepts.Load(), srv.requests.Load())
	}
}

// A Pipeline condition that turns false after a queued poll: the queued
// answer is read, then the Conn writes exactly what a Conn that never
// queued writes.
func TestPipelineOffRestoresWire(t *testing.T) {
	srv, _ := logServer(t, nil)
	big := bytes.Repeat([]byte("z"), 64<<10)
	script := func(cn *Conn, inv *Invocation) {
		ctx := context.Background()
		steps := []func() error{
			func() error {
				return cn.Respond(ctx, &Invocation{RequestID: "r1"}, []byte("hi"), "text/plain", queueOf(cn))
			},
			func() error { return cn.Next(ctx, inv) },
			func() error { return cn.Respond(ctx, &Invocation{RequestID: "r2"}, big, "", queueOf(cn)) },
			func() error { return cn.Next(ctx, inv) },
			func() error {
				return cn.Fail(ctx, &Invocation{RequestID: "r3"}, "E", []byte("{}"), []byte("cause"), queueOf(cn))
			},
			func() error { return cn.Next(ctx, inv) },
		}
		for i, s := range steps {
			if err := s(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
	}
	var plain, toggled recorder
	a := srv.client(t, plain.option()).Conn()
	defer a.Close()
	var inv Invocation
	queuedNext(t, a, &inv)
	start := plain.count()
	script(a, &inv)

	var on atomic.Bool
	on.Store(true)
	b := pipe(srv.client(t, toggled.option()).Conn(), on.Load)
	defer b.Close()
	b.pipe.lazy = false // as a, which reads each answer at once
	queuedNext(t, b, &inv)
	if err := b.Respond(context.Background(), &inv, nil, "", queueOf(b)); err != nil {
		t.Fatal(err)
	}
	on.Store(false)
	before := toggled.count()
	queuedNext(t, b, &inv) // reads the poll queued before the switch
	if toggled.count() != before {
		t.Fatal("Next wrote with a poll queued")
	}
	script(b, &inv)
	want, got := plain.since(start), toggled.since(before)
	if len(got) != len(want) {
		t.Fatalf("%d writes, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("write %d: %.200q, want %.200q", i, got[i], want[i])
		}
	}
}

// N Conns with queueing against the fake Runtime API: the poll queued behind
// each post never takes the runtime above N outstanding, and every
// invocation is answered exactly once.
func TestQueuedPollFakeAPI(t *testing.T) {
	const (
		n     = 4
		total = 4000
	)
	s, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := New(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var runtime sync.WaitGroup
	for w := range n {
		cn := c.Conn()
		queueOnly(cn)
		runtime.Go(func() {
			defer cn.Close()
			var inv Invocation
			for {
				if err := cn.Next(ctx, &inv); err != nil {
					if !errors.Is(err, ErrRuntimeAPI) { // Close answers pending polls with 500
						t.Errorf("slot %d: %v", w, err)
					}
					return
				}
				var err error
				if inv.Payload[1] == 'e' { // the callers' mark for an error
					err = cn.Fail(ctx, &inv, "Handler.Error", inv.Payload, nil, queueOf(cn))
				} else {
					err = cn.Respond(ctx, &inv, inv.Payload, "application/json", queueOf(cn))
				}
				if err != nil {
					t.Errorf("slot %d: %v", w, err)
					return
				}
			}
		})
	}
	if err := s.WaitPolls(ctx, n); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		ids     = make(map[string]int, total)
		errs    int
		callers sync.WaitGroup
	)
	for w := range n {
		callers.Go(func() {
			for i := w; i < total; i += n {
				kind := 'r'
				if i%3 == 0 {
					kind = 'e'
				}
				payload := fmt.Appendf(nil, `"%c%d%s"`, kind, i, strings.Repeat("x", i%61*11))
				res, err := s.Invoke(ctx, rapitest.Request{Payload: payload})
				ok := err == nil
				if kind == 'e' {
					ok = ok && res.Err != nil && res.Err.Type == "Handler.Error" && bytes.Equal(res.Err.Body, payload)
				} else {
					ok = ok && res.Err == nil && bytes.Equal(res.Body, payload)
				}
				if !ok {
					t.Errorf("invocation %d: %+v, %v", i, res, err)
					return
				}
				mu.Lock()
				ids[res.RequestID]++
				if kind == 'e' {
					errs++
				}
				mu.Unlock()
			}
		})
	}
	callers.Wait()
	if err := s.WaitPolls(ctx, n); err != nil { // every Conn's queued poll is registered
		t.Fatal(err)
	}
	st := s.Stats()
	s.Close()
	runtime.Wait()
	if len(ids) != total {
		t.Errorf("%d distinct request IDs, want %d", len(ids), total)
	}
	if st.Violations != 0 || st.MaxOutstanding > n || st.MaxPolls > n {
		t.Errorf("violations %d, max outstanding %d, max polls %d; N = %d", st.Violations, st.MaxOutstanding, st.MaxPolls, n)
	}
	if st.Invocations != total || st.Ended() != total || st.Responses+st.Errors != total || st.Errors != int64(errs) ||
		st.BadRequests != 0 || st.Duplicates != 0 || st.Late != 0 || st.Throttles != 0 {
		t.Errorf("not answered exactly once: %+v", st)
	}
	if st.Polls != total+n || st.NewConns != n {
		t.Errorf("polls %d (want %d), connections %d (want %d)", st.Polls, total+n, st.NewConns, n)
	}
	t.Logf("polls %d, max outstanding %d, max pending polls %d, connections %d", st.Polls, st.MaxOutstanding, st.MaxPolls, st.NewConns)
}

// A post whose write fails did not get the GET behind it out whole: nothing
// is queued, even when the server's early answer is salvaged.
func TestQueuedPollWriteErrorQueuesNothing(t *testing.T) {
	cn := earlyAnswerConn(t)
	queueOnly(cn)
	if err := cn.Respond(context.Background(), &Invocation{RequestID: "id"}, make([]byte, 64<<20), "", queueOf(cn)); !errors.Is(err, errTooLarge) {
		t.Fatalf("err = %v", err)
	}
	if cn.pipe.queued || cn.nc != nil {
		t.Fatalf("queued %v, connection kept %v", cn.pipe.queued, cn.nc != nil)
	}
}

// gatedReader sends one chunk, then waits for release before EOF.
type gatedReader struct {
	first   chan<- struct{}
	release <-chan struct{}
	sent    bool
}

func (r *gatedReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		close(r.first)
		return copy(p, "chunk"), nil
	}
	<-r.release
	return 0, io.EOF
}

// TestPipelineAskedAtWrite: Stream reads its queue value when the end of
// the stream is written, not when the stream begins: a caller that stops
// polling while a stream runs has no poll sent behind it.
func TestPipelineAskedAtWrite(t *testing.T) {
	s, err := rapitest.New(rapitest.Options{MaxConcurrency: 1, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var allowed atomic.Bool
	allowed.Store(true)
	c, err := New(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cn := pipe(c.Conn(), allowed.Load)
	streamQueue := true
	defer cn.Close()
	results := make(chan rapitest.Result, 2)
	for range 2 {
		go func() {
			res, _ := s.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`)})
			results <- res
		}()
	}

	var inv Invocation
	mustNext(t, cn, &inv)
	first, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- cn.Stream(ctx, &inv, "text/plain", &gatedReader{first: first, release: release},
			func(error, int64) (string, []byte) { return "E", nil }, &streamQueue)
	}()
	<-first
	streamQueue = false // the caller stops polling mid-stream
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res := <-results; string(res.Body) != "chunk" {
		t.Fatalf("streamed %q", res.Body)
	}
	if cn.Queued() || s.Stats().PendingPolls != 0 {
		t.Fatalf("a poll went out after the condition said no: queued %v, %+v", cn.Queued(), s.Stats())
	}

	allowed.Store(true)
	mustNext(t, cn, &inv) // a GET of its own
	if err := cn.Respond(ctx, &inv, []byte(`{}`), "application/json", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	<-results
	if !cn.Queued() {
		t.Fatal("no poll queued behind the post while the condition says yes")
	}
	if err := s.WaitPolls(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// A post's answer with a large body (past what is discarded to keep a
// connection otherwise) that has a poll queued behind it: the server has
// read that poll, or will once the body is sent, so the Conn reads the body
// through rather than drop the connection and abandon the poll to take the
// next invocation. Next reads the queued answer, writing nothing.
func TestQueuedPollLargeAnswerKeepsPoll(t *testing.T) {
	const size = 200 << 10
	big := strings.Repeat("b", size)
	var chunks strings.Builder
	for off := 0; off < size; off += 1000 {
		n := min(1000, size-off)
		chunks.WriteString(strconv.FormatInt(int64(n), 16) + "\r\n" + big[:n] + "\r\n")
	}
	tests := []struct {
		name, resp string
		code       int
	}{
		{"202 with length", "HTTP/1.1 202 Accepted\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n" + big, 0},
		{"202 chunked", "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks.String() + "0\r\n\r\n", 0},
		{"410 with length", "HTTP/1.1 410 Gone\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n" + big, 410},
	}
	for _, lazy := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/lazy=%v", tt.name, lazy), func(t *testing.T) {
				if size <= maxDiscardSmall {
					t.Fatalf("the body (%d) must be over the discard cap %d", size, maxDiscardSmall)
				}
				srv, seen := refusingServer(t, tt.resp)
				var rec recorder
				var inv Invocation
				cn := queuedConn(t, srv, &inv, rec.option())
				cn.pipe.lazy = lazy
				err := cn.Respond(context.Background(), &inv, []byte("x"), "", queueOf(cn))
				if lazy && tt.code != 0 {
					if err != nil {
						t.Fatalf("lazy Respond = %v", err)
					}
					err = cn.Next(context.Background(), &inv)
				}
				var se *StatusError
				if tt.code == 0 && err != nil || tt.code != 0 && (!errors.As(err, &se) || se.Code != tt.code) {
					t.Fatalf("post: err = %v, want code %d", err, tt.code)
				}
				before := rec.count()
				queuedNext(t, cn, &inv)
				if w := rec.since(before); len(w) != 0 {
					t.Fatalf("Next wrote %q, want only the queued poll's answer read", w)
				}
				if got := seen(); inv.RequestID != "id-3" || srv.accepts.Load() != 1 || len(got) != 3 || got[2].line != lineNext {
					t.Fatalf("got %q, accepts %d, requests %+v; want the queued poll's id-3 on the first connection",
						inv.RequestID, srv.accepts.Load(), got)
				}
			})
		}
	}
}

// A post's answer that cannot be read (its framing is lost) with a poll
// queued behind it: the connection must go, and with it the poll, which the
// server may hold registered. Next reports that once, writing nothing, so
// that the caller can log it; the Next after it polls afresh.
func TestQueuedPollUnreadableAnswerReportsLostPoll(t *testing.T) {
	tests := []struct {
		name, resp string
		postErr    bool // Respond (not lazy) fails: the head itself is bad
	}{
		{"bad head", "HTTP/1.1 202 Accepted\r\nContent-Length: x\r\n\r\n", true},
		{"bad chunked body", "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false},
	}
	for _, lazy := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/lazy=%v", tt.name, lazy), func(t *testing.T) {
				srv, seen := refusingServer(t, tt.resp)
				var rec recorder
				var inv Invocation
				cn := queuedConn(t, srv, &inv, rec.option())
				cn.pipe.lazy = lazy
				err := cn.Respond(context.Background(), &inv, []byte("x"), "", queueOf(cn))
				if wantErr := tt.postErr && !lazy; (err != nil) != wantErr || wantErr && !errors.Is(err, errMalformed) {
					t.Fatalf("Respond = %v, want an error: %v", err, wantErr)
				}
				before := rec.count()
				err = cn.Next(context.Background(), &inv)
				if !errors.Is(err, errLostPoll) || !errors.Is(err, errMalformed) || inv.RequestID != "" {
					t.Fatalf("Next = %v (request %q), want the lost poll reported", err, inv.RequestID)
				}
				if w := rec.since(before); len(w) != 0 {
					t.Fatalf("Next wrote %q while reporting", w)
				}
				queuedNext(t, cn, &inv)
				if w := rec.since(before); len(w) != 1 || !bytes.Equal(w[0], cn.c.pre.next) {
					t.Fatalf("writes %q, want one fresh GET", w)
				}
				// The lost poll is the first connection's third request.
				// The server may log it after the fresh one.
				waitSeen(t, seen, 1, 2)
				got := seen()
				if on1, on2 := linesOn(got, 1), linesOn(got, 2); srv.accepts.Load() != 2 || len(on1) != 3 ||
					!strings.HasPrefix(on1[1], linePost) || on1[2] != lineNext || !slices.Equal(on2, []string{lineNext}) {
					t.Fatalf("accepts %d, requests %+v; want the lost poll on the first connection, one on the second",
						srv.accepts.Load(), got)
				}
			})
		}
	}
}

// A post's answer over the discard cap that stalls while it is read through
// for its queued poll is cut off by CutIfStalled, as a /next answer is; Next
// then reports the poll lost with the connection.
func TestQueuedPollStalledLargeAnswerCut(t *testing.T) {
	const stall = 100 * time.Millisecond
	srv, _ := logServer(t, func(sc *srvConn, r *srvReq) (action, bool) {
		if sc.id != 1 || sc.n != 1 { // not the POST
			return 0, false
		}
		sc.bw.WriteString("HTTP/1.1 202 Accepted\r\nContent-Length: 204800\r\n\r\n")
		sc.bw.WriteString(strings.Repeat("b", 100<<10))
		sc.bw.Flush()
		sc.wait()
		return closeConn, true
	})
	var inv Invocation
	cn := queuedConn(t, srv, &inv, WithStallTimeout(stall))
	watchStalls(t, cn)
	start := time.Now()
	if err := cn.Respond(context.Background(), &inv, []byte("x"), "", queueOf(cn)); err != nil {
		t.Fatalf("Respond = %v, want nil: the post was accepted", err)
	}
	if d := time.Since(start); d < stall || d > 50*stall {
		t.Fatalf("cut off after %v, want about %v", d, stall)
	}
	if err := cn.Next(context.Background(), &inv); !errors.Is(err, errLostPoll) || !errors.Is(err, ErrTransport) {
		t.Fatalf("Next = %v, want the lost poll reported", err)
	}
	queuedNext(t, cn, &inv)
	if srv.accepts.Load() != 2 {
		t.Fatalf("accepts = %d, want 2", srv.accepts.Load())
	}
}

// TestConnect: Connect opens the connection that the Next after it polls
// on, and is a no-op with one open; a dial that fails is ErrTransport and
// the next call dials again.
func TestConnect(t *testing.T) {
	s, err := rapitest.New(rapitest.Options{MaxConcurrency: 1, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := New(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cn := c.Conn()
	defer cn.Close()
	for range 2 {
		if err := cn.Connect(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// The fake counts a connection once it has accepted it.
	for end := time.Now().Add(5 * time.Second); s.Stats().NewConns == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if st := s.Stats(); st.NewConns != 1 || st.Polls != 0 {
		t.Fatalf("after Connect twice: %d connections, %d polls; want 1, 0", st.NewConns, st.Polls)
	}
	go func() { _, _ = s.Invoke(t.Context(), rapitest.Request{Payload: []byte(`{}`)}) }()
	var inv Invocation
	mustNext(t, cn, &inv)
	if st := s.Stats(); st.NewConns != 1 {
		t.Fatalf("Next opened a connection of its own: %d connections", st.NewConns)
	}

	cn2 := closedPortClient(t).Conn()
	defer cn2.Close()
	if err := cn2.Connect(t.Context()); !errors.Is(err, ErrTransport) {
		t.Fatalf("Connect to a closed port: %v, want ErrTransport", err)
	}
}

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

// TestLazyAnswerKeepsNoLargeBody: a post left for Next to read its answer
// keeps its body until then, for a post on a fresh connection if this one
// ends. For a body over lazyMaxBody the answer is read at once instead, its
// poll still queued, so that an idle Conn never keeps a large answer alive
// (the retain cap bounds what a slot keeps, not what its Conn refers to).
func TestLazyAnswerKeepsNoLargeBody(t *testing.T) {
	srv, _ := logServer(t, nil)
	var inv Invocation
	cn := lazyConn(t, srv, &inv)
	ctx := context.Background()

	body := bytes.Repeat([]byte("x"), lazyMaxBody+1)
	kept := weak.Make(&body[0])
	if err := cn.Respond(ctx, &inv, body, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	body = nil // the test's own reference goes
	runtime.GC()
	runtime.GC()
	if kept.Value() != nil {
		t.Fatalf("the Conn keeps a %d-byte body after Respond returned", lazyMaxBody+1)
	}
	if cn.pipe.pending != "" || !cn.Queued() {
		t.Fatalf("pending %q, queued %v: want the answer read and the poll still queued", cn.pipe.pending, cn.Queued())
	}
	if id := readsQueued(t, cn, &inv); id == "" {
		t.Fatal("no invocation from the queued poll")
	}

	// A small body is left to Next, as before.
	respond(t, cn, &inv)
	if cn.pipe.pending == "" {
		t.Fatal("a small answer was read at once, want it left to Next")
	}
	readsQueued(t, cn, &inv)
}
