package rapi

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// A scripted Runtime API for tests: raw HTTP/1.1 over loopback, no net/http,
// and no allocation per request on its side (so allocation gates measure the
// client alone).

type action int

const (
	keepOpen  action = iota
	closeConn        // close after flushing
	resetConn        // abort with RST after flushing
)

type srvReq struct {
	line   []byte // request line, without CRLF
	method []byte
	path   []byte
	header []byte // raw header lines
	body   []byte // the body; for a chunked one, its data
	// A chunked body (see readChunked): raw is the body as it came, framing
	// and trailers included; chunks the sizes of its chunks; trailer the
	// raw trailer lines.
	chunked bool
	raw     []byte
	chunks  []int
	trailer []byte
}

func (r *srvReq) is(method, path string) bool {
	return string(r.method) == method && string(r.path) == path
}

// headerValue returns the value of a header (case-insensitive), or nil.
func (r *srvReq) headerValue(name string) []byte {
	h := r.header
	for len(h) > 0 {
		i := bytes.IndexByte(h, '\n')
		if i < 0 {
			i = len(h)
		}
		line := bytes.TrimRight(h[:i], "\r")
		h = h[min(i+1, len(h)):]
		if n, v, ok := bytes.Cut(line, []byte(":")); ok && equalFold(n, name) {
			return bytes.TrimSpace(v)
		}
	}
	return nil
}

type srvConn struct {
	nc  net.Conn
	bw  *bufio.Writer
	srv *testServer
	id  int64 // 1 for the first connection accepted, 2 for the next...
	n   int   // requests served on this connection before this one
	// ahead is how many bytes past this request the server had already
	// received when it parsed it: a pipelined request that came in the same
	// read shows here.
	ahead int
}

type handler func(sc *srvConn, r *srvReq) action

type testServer struct {
	t        testing.TB
	ln       net.Listener
	h        handler
	accepts  atomic.Int64
	requests atomic.Int64
	quit     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
}

func newTestServer(t testing.TB, h handler) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, ln: ln, h: h, quit: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *testServer) addr() string { return s.ln.Addr().String() }

func (s *testServer) client(t testing.TB, opts ...Option) *Client {
	t.Helper()
	c, err := New(s.addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *testServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		id := s.accepts.Add(1)
		s.mu.Lock()
		s.conns[nc] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(nc, id)
	}
}

func (s *testServer) close() {
	select {
	case <-s.quit:
		return
	default:
	}
	close(s.quit)
	s.ln.Close()
	s.mu.Lock()
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *testServer) serve(nc net.Conn, id int64) {
	defer s.wg.Done()
	defer func() {
		nc.Close()
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
	}()
	br := bufio.NewReaderSize(nc, 64<<10)
	sc := &srvConn{nc: nc, bw: bufio.NewWriterSize(nc, 64<<10), srv: s, id: id}
	var r srvReq
	for ; ; sc.n++ {
		if !readRequest(br, &r) {
			return
		}
		sc.ahead = br.Buffered()
		s.requests.Add(1)
		act := s.h(sc, &r)
		if sc.bw.Flush() != nil {
			return
		}
		switch act {
		case closeConn:
			return
		case resetConn:
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			return
		}
	}
}

// readRequest reads one request with a Content-Length (or no) body into r,
// reusing r's buffers.
func readRequest(br *bufio.Reader, r *srvReq) bool {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return false
	}
	r.line = append(r.line[:0], bytes.TrimRight(line, "\r\n")...)
	sp1 := bytes.IndexByte(r.line, ' ')
	sp2 := bytes.LastIndexByte(r.line, ' ')
	if sp1 < 0 || sp2 <= sp1 {
		return false
	}
	r.method, r.path = r.line[:sp1], r.line[sp1+1:sp2]
	r.header = r.header[:0]
	n := 0
	r.chunked = false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(line) <= 2 {
			break
		}
		r.header = append(r.header, line...)
		if name, v, ok := bytes.Cut(line, []byte(":")); ok && equalFold(name, hdrContentLength) {
			n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
		if name, v, ok := bytes.Cut(line, []byte(":")); ok && equalFold(name, hdrTransferEnc) {
			r.chunked = equalFold(bytes.TrimSpace(v), "chunked")
		}
	}
	if r.chunked {
		return readChunked(br, r)
	}
	if cap(r.body) < n {
		r.body = make([]byte, n)
	}
	r.body = r.body[:n]
	_, err = io.ReadFull(br, r.body)
	return err == nil
}

// wait blocks until the server shuts down (for handlers that never answer).
func (sc *srvConn) wait() { <-sc.srv.quit }

// waitFor blocks until the server shuts down or d passes.
func (sc *srvConn) waitFor(d time.Duration) {
	select {
	case <-sc.srv.quit:
	case <-time.After(d):
	}
}

const (
	testRequestID = "8476a536-e9f4-11e8-9739-2dfe598c3fcd"
	testARN       = "arn:aws:lambda:us-east-1:123456789012:function:fn"
	testTrace     = "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1"
	testInvID     = "inv-0001"
	testDeadline  = "1700000000123"
)

// nextResponse is a well-formed /next answer with Content-Length.
func nextResponse(id string, payload []byte, extra string) []byte {
	b := []byte("HTTP/1.1 200 OK\r\n" +
		"Content-Type: application/json\r\n" +
		"Lambda-Runtime-Aws-Request-Id: " + id + "\r\n" +
		"Lambda-Runtime-Deadline-Ms: " + testDeadline + "\r\n" +
		"Lambda-Runtime-Invoked-Function-Arn: " + testARN + "\r\n" +
		"Lambda-Runtime-Trace-Id: " + testTrace + "\r\n" +
		"Lambda-Runtime-Invocation-Id: " + testInvID + "\r\n" +
		extra +
		"Date: Mon, 27 Jul 2009 12:28:53 GMT\r\n" +
		"Content-Length: " + strconv.Itoa(len(payload)) + "\r\n\r\n")
	return append(b, payload...)
}

var accepted = []byte("HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nDate: Mon, 27 Jul 2009 12:28:53 GMT\r\nContent-Length: 16\r\n\r\n{\"status\":\"OK\"}\n")

// apiHandler answers /next with a fixed invocation and posts with 202. It
// does not allocate per request.
func apiHandler(payload []byte) handler {
	next := nextResponse(testRequestID, payload, "")
	return func(sc *srvConn, r *srvReq) action {
		if r.is("GET", pathNext) {
			sc.bw.Write(next)
		} else {
			sc.bw.Write(accepted)
		}
		return keepOpen
	}
}

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }

func newBenchReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 4096) }

// wrapDial makes a Client dial as usual and use what wrap makes of each
// connection, so that a test sees its reads or writes.
func wrapDial(wrap func(net.Conn) net.Conn) Option {
	return withDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(nc), nil
	})
}

// readWatch tells, on got, of a Read that returned bytes since armed was
// set: the Conn then holds the start of a reply, which a cut from then on
// finds begun.
type readWatch struct {
	armed atomic.Bool
	got   chan struct{}
}

type watchedConn struct {
	net.Conn
	w *readWatch
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.w.armed.Load() {
		select {
		case c.w.got <- struct{}{}:
		default:
		}
	}
	return n, err
}

func newReadWatch() *readWatch { return &readWatch{got: make(chan struct{}, 1)} }

func (w *readWatch) option() Option {
	return wrapDial(func(nc net.Conn) net.Conn { return &watchedConn{Conn: nc, w: w} })
}

// wait waits for a Read that returned bytes once armed.
func (w *readWatch) wait(t *testing.T) {
	t.Helper()
	select {
	case <-w.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no byte of the reply was read")
	}
}

// always is a queue condition that always queues.
func always() bool { return true }

// queueing holds the condition of each Conn whose tests queue a poll
// behind its posts, as a runtime's slot decides its queue value.
var queueing sync.Map // *Conn -> func() bool

// pipe makes the posts of cn queue a poll behind them while when says so.
func pipe(cn *Conn, when func() bool) *Conn {
	queueing.Store(cn, when)
	return cn
}

// queueOf is the queue value of the next post of cn.
func queueOf(cn *Conn) bool {
	f, ok := queueing.Load(cn)
	return ok && f.(func() bool)()
}

// yes is what queuePtr points to: Stream only reads it.
var yes = true

// queuePtr is queueOf for Stream, without an allocation.
func queuePtr(cn *Conn) *bool {
	if queueOf(cn) {
		return &yes
	}
	return nil
}

// queueOnly pipelines cn's polls without lazy answers: each post still
// reads its own answer, and the next Next only the queued poll's. The
// table in the package doc is the same either way; the runtime's Conns
// also leave the answers to Next.
func queueOnly(cn *Conn) {
	cn.pipe.lazy = false
	pipe(cn, always)
}

// bytes returns the whole request as one slice.
func (r *request) bytes() []byte {
	out := append([]byte(nil), r.head[:r.split]...)
	out = append(out, r.mid...)
	out = append(out, r.head[r.split:]...)
	return append(out, r.body...)
}
