package rapitest

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/ants/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// ants, which the runtime of Example_handler links, starts a default
	// pool when it is imported.
	ants.Release()
	flag.Parse()
	if d, err := time.ParseDuration(flag.Lookup("test.timeout").Value.String()); err == nil && d > 0 {
		testTimeout = d * 9 / 10
	}
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait of a test: most of the test binary's own
// -timeout, so that only a hung test, never a slow machine, meets it.
var testTimeout = 10 * time.Minute

// testRuntime is a minimal runtime written with net/http (keep-alive
// connections) that drives the fake the way a real runtime would.
type testRuntime struct {
	t    testing.TB
	s    *Server
	base string
	tr   *http.Transport
	hc   *http.Client
}

func newTestRuntime(t testing.TB, s *Server) *testRuntime {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &testRuntime{t: t, s: s, base: "http://" + s.Addr(), tr: tr, hc: &http.Client{Transport: tr}}
}

// event is one reply of the fake.
type event struct {
	status int
	header http.Header
	body   []byte
}

func (e event) id() string { return e.header.Get(hdrRequestID) }

// do sends one request; a nil body is sent without one, a chunked body
// without Content-Length.
func (rt *testRuntime) do(ctx context.Context, method, path string, hdr map[string]string, body []byte, chunked bool) (event, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length: sent chunked
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, rt.base+path, rd)
	if err != nil {
		return event{}, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := rt.hc.Do(req)
	if err != nil {
		return event{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return event{status: resp.StatusCode, header: resp.Header, body: b}, err
}

func (rt *testRuntime) next(ctx context.Context) (event, error) {
	return rt.do(ctx, http.MethodGet, pathNext, nil, nil, false)
}

func (rt *testRuntime) respond(id string, body []byte) int {
	return rt.post(pathInvocation+url.PathEscape(id)+"/response", nil, body, false)
}

// post sends a post and returns its status, failing the test on a
// transport error.
func (rt *testRuntime) post(path string, hdr map[string]string, body []byte, chunked bool) int {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ev, err := rt.do(ctx, http.MethodPost, path, hdr, body, chunked)
	if err != nil {
		rt.t.Errorf("POST %s: %v", path, err)
		return 0
	}
	return ev.status
}

// nextAsync starts one /next and delivers its outcome on the channel.
func (rt *testRuntime) nextAsync(ctx context.Context) <-chan event {
	ch := make(chan event, 1)
	go func() {
		ev, err := rt.next(ctx)
		if err != nil {
			ev.status = -1
		}
		ch <- ev
	}()
	return ch
}

// nextPending starts one /next, as nextAsync, and returns once the server
// holds it pending.
func (rt *testRuntime) nextPending(ctx context.Context) <-chan event {
	rt.t.Helper()
	ch := rt.nextAsync(ctx)
	if err := rt.s.WaitPolls(ctx, 1); err != nil {
		rt.t.Fatal(err)
	}
	return ch
}

// serve runs n slots that poll and hand each invocation to fn, until
// /next fails (the server closed) or maxEach invocations each; wait
// returns once they have all stopped.
func (rt *testRuntime) serve(ctx context.Context, n, maxEach int, fn func(event)) (wait func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for range maxEach {
				ev, err := rt.next(ctx)
				if err != nil || ev.status != http.StatusOK {
					return
				}
				fn(ev)
			}
		})
	}
	return func() { wg.Wait(); cancel() }
}

// echo answers every invocation with its own payload.
func (rt *testRuntime) echo(ev event) {
	if st := rt.respond(ev.id(), ev.body); st != http.StatusAccepted {
		rt.t.Errorf("respond %s: status %d", ev.id(), st)
	}
}

func newServer(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond for up to testTimeout.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(testTimeout); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type invokeResult struct {
	res Result
	err error
}

func invokeAsync(ctx context.Context, s *Server, req Request) <-chan invokeResult {
	ch := make(chan invokeResult, 1)
	go func() {
		res, err := s.Invoke(ctx, req)
		ch <- invokeResult{res, err}
	}()
	return ch
}

func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatal("timed out")
		panic("unreachable")
	}
}
