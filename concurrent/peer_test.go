package concurrent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/limits"
)

// peer is a Runtime API that allocates nothing per invocation, so that
// what a process-wide count of allocations sees per invocation is the
// runtime's own (allocation_test.go, BenchmarkInvocation). It speaks just
// enough HTTP/1.1 for rapi: GET /next, and POSTs with a Content-Length.
// Each invocation is handed out when the test asks for it (give), and the
// test hears when its answer has been read (answered).
type peer struct {
	ln       net.Listener
	payload  []byte
	give     chan struct{}
	answered chan struct{}
	quit     chan struct{}
	timeout  *time.Timer
	wg       sync.WaitGroup

	mu       sync.Mutex
	lastBody []byte // the last answer's body, for the test to check
	lastPath []byte
	err      error // the first protocol error
}

func newPeer(t testing.TB, payload []byte) *peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{
		ln: ln, payload: payload,
		give: make(chan struct{}), answered: make(chan struct{}), quit: make(chan struct{}),
		timeout:  time.NewTimer(time.Hour),
		lastBody: make([]byte, 0, 64<<10), lastPath: make([]byte, 0, 256),
	}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		close(p.quit)
		_ = ln.Close()
		p.wg.Wait()
		if err := p.failure(); err != nil {
			t.Errorf("peer: %v", err)
		}
	})
	return p
}

func (p *peer) addr() string { return p.ln.Addr().String() }

func (p *peer) accept() {
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.serveConn(nc) })
	}
}

func (p *peer) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *peer) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// last returns copies of the last answer's path and body.
func (p *peer) last() (path, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.lastPath), string(p.lastBody)
}

// invoke hands out one invocation and waits until its answer is read. It
// allocates nothing itself (one timer, reset). Not for concurrent use.
func (p *peer) invoke(t testing.TB) {
	p.timeout.Reset(10 * time.Second)
	defer p.timeout.Stop()
	select {
	case p.give <- struct{}{}:
	case <-p.timeout.C:
		t.Fatal("peer: no /next pending")
	}
	select {
	case <-p.answered:
	case <-p.timeout.C:
		t.Fatal("peer: no answer")
	}
}

var (
	peerNextPath = []byte("/2018-06-01/runtime/invocation/next")
	peerAccepted = []byte("HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"status\":\"OK\"}\n")
)

// serveConn answers one connection; everything it needs is allocated once.
func (p *peer) serveConn(nc net.Conn) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	deadline := strconv.AppendInt(nil, time.Now().Add(time.Hour).UnixMilli(), 10)
	const idDigits = 12
	var (
		head  = make([]byte, 0, 1024)
		reqID = []byte("8476a536-e9f4-11e8-9739-000000000000")
		seq   int64
		path  = make([]byte, 0, 256)
	)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return // the runtime closed the connection
		}
		method, rest, _ := bytes.Cut(line, []byte(" "))
		target, _, _ := bytes.Cut(rest, []byte(" "))
		path = append(path[:0], target...)
		get := string(method) == "GET"
		length := 0
		for {
			h, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(h) <= 2 {
				break
			}
			if name, v, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
				length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			}
		}
		if get {
			if !bytes.Equal(path, peerNextPath) {
				p.fail(errors.New("GET of " + string(path)))
				return
			}
			select {
			case <-p.give:
			case <-p.quit:
				return
			}
			seq++
			for i, v := 0, seq; i < idDigits; i, v = i+1, v/10 {
				reqID[len(reqID)-1-i] = byte('0' + v%10)
			}
			head = append(head[:0], "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nLambda-Runtime-Aws-Request-Id: "...)
			head = append(head, reqID...)
			head = append(head, "\r\nLambda-Runtime-Deadline-Ms: "...)
			head = append(head, deadline...)
			head = append(head, "\r\nLambda-Runtime-Invoked-Function-Arn: arn:aws:lambda:us-east-1:123456789012:function:peer"+
				"\r\nLambda-Runtime-Trace-Id: Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"+
				"\r\nLambda-Runtime-Invocation-Id: 5f8a1c3e-8d2b-4b7e-9a61-0c4f2e7d9b13"+
				"\r\nContent-Length: "...)
			head = strconv.AppendInt(head, int64(len(p.payload)), 10)
			head = append(head, "\r\n\r\n"...)
			head = append(head, p.payload...)
			if _, err := nc.Write(head); err != nil {
				return
			}
			continue
		}
		p.mu.Lock()
		p.lastPath = append(p.lastPath[:0], path...)
		p.lastBody = p.lastBody[:0]
		for length > 0 {
			chunk, err := br.Peek(min(length, br.Size()))
			if err != nil && len(chunk) == 0 {
				p.mu.Unlock()
				return
			}
			if len(p.lastBody)+len(chunk) <= cap(p.lastBody) {
				p.lastBody = append(p.lastBody, chunk...)
			}
			_, _ = br.Discard(len(chunk))
			length -= len(chunk)
		}
		p.mu.Unlock()
		if _, err := nc.Write(peerAccepted); err != nil {
			return
		}
		select {
		case p.answered <- struct{}{}:
		case <-p.quit:
			return
		}
	}
}

// runPeer runs a Runtime for handler with n slots against p until the
// test ends. It logs in the default format and level, to nowhere.
func runPeer(t testing.TB, p *peer, n int, handler any, opts ...Option) *Runtime {
	t.Helper()
	e := env{"AWS_LAMBDA_RUNTIME_API": p.addr(), "AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}
	log := newLogger(limits.FormatJSON, limits.LevelInfo, zapDiscard{})
	opts = append([]Option{WithLookupEnv(e.lookup), WithLogger(log)}, opts...)
	rt, err := New(handler, opts...)
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, rt)
	return rt
}

// runUntilCleanup runs rt until the test ends, and checks that Run then
// returns nil. It returns Run's context.
func runUntilCleanup(t testing.TB, rt *Runtime) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
			return
		}
		waitHandlers(t, rt)
	})
	return ctx
}

// waitHandlers fails the test if a handler still runs 10 s after Run
// returned (Run does not wait past its shutdown budget): one that outlived
// its test could touch the next test's state.
func waitHandlers(t testing.TB, rt *Runtime) {
	t.Helper()
	if rt.workers == nil {
		return
	}
	if err := rt.workers.Release(10 * time.Second); err != nil {
		t.Errorf("a handler outlived its runtime: %v", err)
	}
}

// zapDiscard is a WriteSyncer to nowhere.
type zapDiscard struct{}

func (zapDiscard) Write(b []byte) (int, error) { return len(b), nil }
func (zapDiscard) Sync() error                 { return nil }

// BenchmarkInvocation: one tiny invocation through the whole runtime
// (poll, context, handler, answer, buffers back) against a peer
// that allocates nothing, so allocs/op are the runtime's own (and, for
// demo, the adapter's and the demo handler's). The round trip is one
// invocation at a time, so ns/op is latency, loopback included.
func BenchmarkInvocation(b *testing.B) {
	raw := RawHandler(func(_ context.Context, _ []byte, out *Buffer) error {
		out.B = append(out.B, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`...)
		return nil
	})
	for _, bc := range []struct {
		name    string
		n       int
		handler any
	}{
		{"handler=raw/n=2", 2, raw},
		{"handler=raw/n=1", 1, raw},
		{"handler=demo/n=2", 2, demo.Handle},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newPeer(b, []byte(`{}`))
			runPeer(b, p, bc.n, bc.handler)
			p.invoke(b)
			b.ReportAllocs()
			for b.Loop() {
				p.invoke(b)
			}
		})
	}
}
