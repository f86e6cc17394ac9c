package rapitest

import (
	"context"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake Runtime API listening on 127.0.0.1. Its methods are safe
// for concurrent use.
type Server struct {
	opts Options
	ids  ids
	ln   net.Listener
	srv  *http.Server
	mux  *http.ServeMux
	c    counters

	seq      atomic.Uint64 // last invocation sequence number handed out
	pollq    chan *poll    // pending /next, oldest first
	pollSig  chan struct{} // cap 1: a /next was queued (wakes WaitPolls or WaitPoll)
	inflight sync.Map      // request ID -> *invocation held by the runtime
	// connStates: net.Conn -> its last http.ConnState, with IdleTimeout.
	connStates sync.Map

	closed    chan struct{}
	closeOnce sync.Once
	serveDone chan struct{}
	active    atomic.Int64 // handlers running, waited for by Close

	mu      sync.Mutex
	initErr struct {
		typ  string
		body []byte
		ok   bool
	}
	extensions map[string]string // identifier -> name of registered extensions
}

// New validates opts and starts a server on Options.Addr (by default a free
// port of 127.0.0.1).
func New(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts,
		ids:  newIDs(),
		ln:   ln,
		mux:  http.NewServeMux(),
		// Room for every poll a well-behaved runtime makes and far more; an
		// excess /next beyond it waits to be queued but is still counted.
		pollq:     make(chan *poll, max(4*opts.MaxConcurrency, 1024)),
		pollSig:   make(chan struct{}, 1),
		closed:    make(chan struct{}),
		serveDone: make(chan struct{}),
	}
	s.mux.HandleFunc("GET "+pathNext, s.handleNext)
	s.mux.HandleFunc("POST "+pathInvocation+"{id}/response", s.handleResponse)
	s.mux.HandleFunc("POST "+pathInvocation+"{id}/error", s.handleError)
	s.mux.HandleFunc("POST "+pathInitError, s.handleInitError)
	s.mux.HandleFunc("POST "+pathExtRegister, s.handleExtRegister)
	s.mux.HandleFunc("GET "+pathExtEventNext, s.handleExtNext)
	s.srv = &http.Server{
		Handler: http.HandlerFunc(s.serve),
		// No ReadHeaderTimeout: it arms and disarms a timer on the connection
		// for every request, a few percent of the fake's CPU under load. A
		// peer that stalls mid-request is cut by Close. A peer that
		// misbehaves on purpose is a test case, not news.
		ErrorLog:    log.New(io.Discard, "", 0),
		IdleTimeout: opts.IdleTimeout,
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.c.newConns.Add(1)
			}
			if opts.IdleTimeout > 0 {
				s.trackIdle(c, st)
			}
		},
	}
	go func() {
		defer close(s.serveDone)
		_ = s.srv.Serve(ln) // returns ErrServerClosed after Close
	}()
	return s, nil
}

// trackIdle counts the connections closed while idle, which with
// IdleTimeout set is the server closing them (a client that closes an
// idle connection is counted too).
func (s *Server) trackIdle(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateClosed, http.StateHijacked:
		if prev, ok := s.connStates.LoadAndDelete(c); ok && prev == http.StateIdle && st == http.StateClosed {
			s.c.idleClosed.Add(1)
		}
	default:
		s.connStates.Store(c, st)
	}
}

// Addr returns host:port, the value for AWS_LAMBDA_RUNTIME_API.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Env returns the environment of a runtime under test, for
// concurrent.WithLookupEnv: AWS_LAMBDA_RUNTIME_API is this server and
// AWS_LAMBDA_MAX_CONCURRENCY its Options.MaxConcurrency, with vars on top
// (LMIGO_* tuning, say). Nothing is read from the process's environment,
// so tests can run in parallel.
func (s *Server) Env(vars map[string]string) func(key string) (string, bool) {
	env := map[string]string{
		"AWS_LAMBDA_RUNTIME_API":     s.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(s.opts.MaxConcurrency),
	}
	maps.Copy(env, vars)
	return func(key string) (string, bool) {
		v, ok := env[key]
		return v, ok
	}
}

// Stats returns a snapshot of the accounting.
func (s *Server) Stats() Stats { return s.c.snapshot() }

// InitError returns the last /runtime/init/error posted.
func (s *Server) InitError() (errorType string, body []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initErr.typ, append([]byte(nil), s.initErr.body...), s.initErr.ok
}

// WaitPolls blocks until at least n /next are pending (for n >= 1, the
// runtime has finished init), ctx is done or the server closes.
func (s *Server) WaitPolls(ctx context.Context, n int) error {
	// pollSig wakes one waiter only; the tick covers several waiters.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.isClosed() {
			return ErrClosed
		}
		if len(s.pollq) >= n {
			return nil
		}
		select {
		case <-s.pollSig:
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return ErrClosed
		}
	}
}

// WaitPoll is WaitPolls(ctx, 1) bounded by d: it returns nil once a /next is
// pending, context.DeadlineExceeded after d, ctx.Err() or ErrClosed. A load
// driver calls it after each throttled attempt, so it costs one reused timer
// rather than a context and a ticker per call. Each new /next wakes one
// waiter. A waiter that finds more than one pending wakes the next. So
// waiters go as soon as there is a /next for them, not at their bound.
func (s *Server) WaitPoll(ctx context.Context, d time.Duration) error {
	if s.isClosed() {
		return ErrClosed
	}
	if len(s.pollq) >= 1 {
		return nil
	}
	t := getTimer(d)
	defer putTimer(t)
	for {
		select {
		case <-s.pollSig:
			if n := len(s.pollq); n >= 1 {
				if n >= 2 {
					select {
					case s.pollSig <- struct{}{}:
					default:
					}
				}
				return nil
			}
		case <-t.C:
			return context.DeadlineExceeded
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return ErrClosed
		}
	}
}

// Close stops the server: pending /next get 500, Invoke calls return
// ErrClosed, and Close returns once every handler has returned. It is
// idempotent and always returns nil.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		// Handlers return promptly once closed; a peer stuck on I/O is cut.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
		}
		cancel()
		<-s.serveDone
		// A handler may have started before its connection was cut.
		for i := 0; i < 2000 && s.active.Load() > 0; i++ {
			time.Sleep(time.Millisecond)
		}
	})
	return nil
}

// serve counts the request, applies Options.Faults and routes it.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.active.Add(1)
	defer s.active.Add(-1)
	call := s.c.calls.Add(1)
	if faults := s.opts.Faults; faults != nil {
		if f := faults(int(call), r); f != nil {
			s.inject(w, r, f, func(w http.ResponseWriter) { s.mux.ServeHTTP(w, r) })
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}
