package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// overrunEvent drives overrunHandler.
type overrunEvent struct {
	Hang    bool `json:"hang"`    // ignore the deadline: block until the test releases the hung handlers
	Barrier bool `json:"barrier"` // block until the barrier is full
}

// overrunHandler answers at once, or hangs until hung is closed (never by
// time), or waits at a barrier of n handlers, to prove n slots serve at once.
type overrunHandler struct {
	hung    chan struct{}
	hanging atomic.Int64
	barrier *barrier
	abort   chan struct{} // opens the barrier when the test fails
}

func newOverrunHandler(n int) *overrunHandler {
	return &overrunHandler{hung: make(chan struct{}), barrier: &barrier{n: n, all: make(chan struct{})}, abort: make(chan struct{})}
}

func (h *overrunHandler) handle(_ context.Context, ev overrunEvent) (string, error) {
	switch {
	case ev.Hang:
		h.hanging.Add(1)
		defer h.hanging.Add(-1)
		<-h.hung
		return "late", nil
	case ev.Barrier:
		h.barrier.arrive()
		select {
		case <-h.barrier.all:
		case <-h.abort:
		}
		return "together", nil
	}
	return "ok", nil
}

// TestOverrunReplacesSlot: at N=8, with 1..8 handlers that ignore their
// deadline and a steady load beside them, every slot whose handler overran
// is replaced once its deadline is past by the grace: the environment
// serves at full N again (8 invocations at once, at a barrier), polls plus
// the invocations the fake still holds never exceed N, nothing is lost,
// and when the hung handlers return at last their late answers get 410,
// are logged with their request IDs, and their goroutines leave the pool.
func TestOverrunReplacesSlot(t *testing.T) {
	const (
		n       = 8
		grace   = 100 * time.Millisecond
		timeout = 200 * time.Millisecond // the hung invocations' deadline
	)
	for hung := 1; hung <= n; hung++ {
		t.Run(fmt.Sprintf("%d hung", hung), func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
			log, logs := observe()
			h := newOverrunHandler(n)
			rt, err := New(h.handle, WithLogger(log), WithLookupEnv(api.Env(map[string]string{
				"LMIGO_OVERRUN_GRACE": grace.String(),
				"LMIGO_WEDGED_EXIT":   "off",
			})))
			if err != nil {
				t.Fatal(err)
			}
			stop, wait := runStoppable(t, api, rt, n)
			ctx, cancel := testContext(t)
			defer cancel()
			released := false
			release := func() {
				if !released {
					released = true
					close(h.hung)
				}
			}
			defer release()

			// A steady load, all through.
			var shorts atomic.Int64
			loadCtx, stopLoad := context.WithCancel(ctx)
			var load sync.WaitGroup
			for range 2 {
				load.Go(func() {
					for loadCtx.Err() == nil {
						r, err := api.Invoke(loadCtx, rapitest.Request{Payload: []byte(`{}`), Timeout: time.Hour})
						if err != nil {
							return // stopped
						}
						if r.Err != nil || string(r.Body) != `"ok"` {
							t.Errorf("short invocation: %s %+v", r.Body, r.Err)
							return
						}
						shorts.Add(1)
					}
				})
			}

			hangN(t, api, h, hung, timeout)

			// Full N serving again while the handlers still hang: n
			// invocations at once, within a bound far beyond the grace.
			defer close(h.abort)
			bctx, bcancel := context.WithTimeout(ctx, 30*time.Second)
			defer bcancel()
			var together sync.WaitGroup
			for range n {
				together.Go(func() {
					r, err := api.Invoke(bctx, rapitest.Request{Payload: []byte(`{"barrier":true}`), Timeout: time.Hour})
					if err != nil || r.Err != nil || string(r.Body) != `"together"` {
						t.Errorf("barrier invocation: %s %+v, %v", r.Body, r.Err, err)
					}
				})
			}
			together.Wait()
			if t.Failed() {
				t.Fatalf("not %d invocations at once with %d handlers hung: stats %+v", n, hung, api.Stats())
			}
			// The watch replaces a slot, then writes its warning: the
			// replacements may serve before the last warning is out.
			waitUntil(t, "a warning per overrun", func() bool { return logs.FilterMessage(msgOverrun).Len() >= hung })
			for _, e := range logs.FilterMessage(msgOverrun).All() {
				if past, _ := e.ContextMap()["pastDeadline"].(time.Duration); past < grace {
					t.Errorf("replaced %v past the deadline, before the grace %v: %v", past, grace, e.ContextMap())
				}
			}
			if got := logs.FilterMessage(msgOverrun).Len(); got != hung {
				t.Errorf("%d overrun warnings, want %d", got, hung)
			}

			release()
			waitUntil(t, "the late answers", func() bool { return api.Stats().Late == int64(hung) })
			waitUntil(t, "the hung slots released", func() bool { return rt.overrunning() == 0 })
			stopLoad()
			load.Wait()
			stop()
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			st := api.Stats()
			if st.Violations != 0 || st.MaxOutstanding > n || st.Duplicates != 0 ||
				st.Timeouts != int64(hung) || st.Answered() != shorts.Load()+n || st.Late != int64(hung) {
				t.Fatalf("stats %+v, %d short invocations", st, shorts.Load())
			}
			checkLateAnswersLogged(t, logs, hung)
		})
	}
}

// checkLateAnswersLogged: each late answer of a handler that overran is
// logged with its request ID.
func checkLateAnswersLogged(t *testing.T, logs *observer.ObservedLogs, hung int) {
	t.Helper()
	ids := map[string]bool{}
	for _, e := range logs.FilterMessage(msgOverrun).All() {
		ids[e.ContextMap()[keyRequestID].(string)] = true
	}
	late := logs.FilterMessage(msgOverrunReturned).All()
	if len(late) != hung || len(ids) != hung {
		t.Fatalf("%d late answers logged for %d overruns, want %d", len(late), len(ids), hung)
	}
	for _, e := range late {
		if id, _ := e.ContextMap()[keyRequestID].(string); !ids[id] {
			t.Errorf("late answer logged for %q, which did not overrun: %v", id, e.ContextMap())
		}
	}
}

// hangN hands out n invocations that hang, each with deadline timeout,
// and returns once the fake has timed them all out.
func hangN(t *testing.T, api *rapitest.Server, h *overrunHandler, n int, timeout time.Duration) {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	before := h.hanging.Load()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"hang":true}`), Timeout: timeout})
			if err != nil || r.Err == nil || r.Err.Type != rapitest.ErrorTypeTimeout {
				t.Errorf("hung invocation: %+v, %v; want a timeout", r, err)
			}
		})
	}
	wg.Wait()
	waitUntil(t, "the hung handlers", func() bool { return h.hanging.Load() == before+int64(n) })
}

// TestOverrunBound: at most LMIGO_MAX_OVERRUNS slots are replaced at once.
// At N=2 with a bound of 1, the first of two hung handlers' slots is
// replaced, the second is held (warned about, not replaced) and the bound
// is logged once with the count, and so is a third hung handler on the
// replacement; once the handlers return, the held slots serve again and
// the environment is back to N polls, within N all along.
func TestOverrunBound(t *testing.T) {
	const (
		n       = 2
		grace   = 100 * time.Millisecond
		timeout = 200 * time.Millisecond
	)
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	log, logs := observe()
	h := newOverrunHandler(n)
	rt, err := New(h.handle, WithLogger(log), WithLookupEnv(api.Env(map[string]string{
		"LMIGO_OVERRUN_GRACE": grace.String(),
		"LMIGO_MAX_OVERRUNS":  "1",
		"LMIGO_WEDGED_EXIT":   "off",
	})))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, n)
	release := sync.OnceFunc(func() { close(h.hung) })
	defer release()
	hangN(t, api, h, 2, timeout)
	waitUntil(t, "two overruns logged", func() bool { return logs.FilterMessage(msgOverrun).Len() == 2 })
	// The replacement polls: one slot serves.
	ctx, cancel := testContext(t)
	defer cancel()
	if err := api.WaitPolls(ctx, 1); err != nil {
		t.Fatal(err)
	}
	hangN(t, api, h, 1, timeout)
	waitUntil(t, "the third overrun logged", func() bool { return logs.FilterMessage(msgOverrun).Len() == 3 })

	replaced := 0
	for _, e := range logs.FilterMessage(msgOverrun).All() {
		if e.ContextMap()["replaced"] == true {
			replaced++
		}
	}
	bound := logs.FilterMessage(msgOverrunBound).All()
	if replaced != 1 || len(bound) != 1 || bound[0].ContextMap()["overrunning"] != int64(1) {
		t.Fatalf("%d replaced, want 1; the bound logged %d times, want once with the count: %v", replaced, len(bound), bound)
	}
	if st := api.Stats(); st.PendingPolls != 0 || st.Violations != 0 {
		t.Fatalf("with every slot held and the bound reached: %+v", st)
	}

	release()
	waitUntil(t, "the late answers", func() bool { return api.Stats().Late == 3 })
	waitUntil(t, "the replaced slot released", func() bool { return rt.overrunning() == 0 })
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatalf("not back to %d polls: %v", n, err)
	}
	stop()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if st := api.Stats(); st.Violations != 0 || st.MaxOutstanding > n || st.Late != 3 || st.Answered() != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestWedgedExit: when no slot can serve, every one held by a handler that
// overran and the bound reached, for LMIGO_WEDGED_EXIT, the runtime writes
// one FATAL line naming each hung request ID with how long it ran past its
// deadline and where its handler is (its stack, cut), the last metrics
// document counts EndedWedged, and the process exits 1 (the exit function
// here, which returns).
func TestWedgedExit(t *testing.T) {
	const (
		n       = 2
		grace   = 100 * time.Millisecond
		timeout = 200 * time.Millisecond
		bound   = 300 * time.Millisecond
	)
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	var stderr, stdout syncBuffer
	exited := make(chan int, 1)
	h := newOverrunHandler(n)
	rt, err := New(h.handle, WithLookupEnv(api.Env(map[string]string{
		"LMIGO_OVERRUN_GRACE":    grace.String(),
		"LMIGO_MAX_OVERRUNS":     "1",
		"LMIGO_WEDGED_EXIT":      bound.String(),
		"AWS_LAMBDA_LOG_FORMAT":  "JSON",
		"LMIGO_METRICS":          "emf",
		"LMIGO_METRICS_INTERVAL": "1h",
	})), func(o *options) {
		o.stderr = zapcore.AddSync(&stderr)
		o.stdout = &stdout
		o.exit = func(code int) { exited <- code }
	})
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, n)
	release := sync.OnceFunc(func() { close(h.hung) })
	defer release()
	hangN(t, api, h, 2, timeout)
	ctx, cancel := testContext(t)
	defer cancel()
	if err := api.WaitPolls(ctx, 1); err != nil {
		t.Fatal(err)
	}
	hangN(t, api, h, 1, timeout)
	wedged := time.Now() // at the latest: the third overrun is not even replaced yet
	var code int
	select {
	case code = <-exited:
	case <-ctx.Done():
		t.Fatalf("no exit while wedged:\n%s", stderr.String())
	}
	if took := time.Since(wedged); code != 1 || took < bound-grace {
		// The third deadline passed before wedged was read: the
		// environment may have been wedged since, up to the grace before.
		t.Fatalf("exit %d after %v, want 1 after at least %v", code, took, bound-grace)
	}

	var overran []string
	var fatal map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not one JSON object: %q", line)
		}
		switch m["message"] {
		case msgOverrun:
			overran = append(overran, m[keyRequestID].(string))
		case msgWedged:
			if fatal != nil || m["level"] != "FATAL" || len(line) >= maxLogLine {
				t.Fatalf("a second FATAL line, or not FATAL, or %d bytes: %s", len(line), line)
			}
			fatal = m
		}
	}
	if fatal == nil || len(overran) != 3 {
		t.Fatalf("FATAL line %v, %d overruns logged:\n%s", fatal, len(overran), stderr.String())
	}
	hung, _ := fatal["hung"].([]any)
	named := map[string]bool{}
	for _, x := range hung {
		e := x.(map[string]any)
		named[e[keyRequestID].(string)] = true
		past, err := time.ParseDuration(e["pastDeadline"].(string))
		if err != nil || past < grace || !strings.Contains(e["stack"].(string), "overrunHandler).handle") {
			t.Errorf("hung entry %v: want its time past the deadline and its handler's stack", e)
		}
	}
	for _, id := range overran {
		if !named[id] {
			t.Errorf("%s overran but is not named in the FATAL line %v", id, fatal)
		}
	}
	if docs := strings.Split(strings.TrimSpace(stdout.String()), "\n"); len(docs) == 0 || emfValues(t, docs[len(docs)-1]+"\n")["EndedWedged"] != 1 {
		t.Errorf("the last metrics document does not count EndedWedged: %s", stdout.String())
	}

	release()
	waitUntil(t, "the late answers", func() bool { return api.Stats().Late == 3 })
	stop()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if st := api.Stats(); st.Violations != 0 || st.MaxOutstanding > n {
		t.Fatalf("stats %+v", st)
	}
}

// TestWedgedLineBounded: however many handlers hang and however deep their
// stacks, the FATAL line stays within the log line bound, longest overrun
// first, and says how many it did not list.
func TestWedgedLineBounded(t *testing.T) {
	now := time.Now()
	for _, count := range []int{1, 3, 100, 5000} {
		hung := make([]*overrun, count)
		stacks := map[uint64]string{}
		for i := range hung {
			hung[i] = &overrun{deadline: now.Add(-time.Duration(i) * time.Second), goid: uint64(i + 1)}
			hung[i].inv.RequestID = fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
			stacks[uint64(i+1)] = strings.Repeat("main.handler(0x1234, 0x5678)\n\t/var/task/main.go:42 +0x1f\n", 200)
		}
		list := wedgedList{now: now, hung: hung, stacks: stacks}
		list.fit(wedgedBudget)
		enc := zapcore.NewJSONEncoder(encoderConfig())
		buf, err := enc.EncodeEntry(zapcore.Entry{Level: zapcore.FatalLevel, Time: now, Message: msgWedged},
			[]zapcore.Field{zap.Array("hung", list), zap.Int("notListed", count-list.n)})
		if err != nil {
			t.Fatal(err)
		}
		if buf.Len() >= maxLogLine || list.n == 0 || (count <= 3 && list.n != count) {
			t.Fatalf("%d hung: a line of %d bytes listing %d", count, buf.Len(), list.n)
		}
	}
}

// TestLongInvocationKept: an invocation whose deadline is 30 minutes away
// is never taken for an overrun, however short the grace, while 10,000
// short ones run beside it at N=16; its slot's connection, closed by the
// Runtime API while it sat idle, is used again for its answer and its
// next poll, and nothing is lost. (The handler finishes early, released by
// the test: the deadline is what matters.)
func TestLongInvocationKept(t *testing.T) {
	const (
		n      = 16
		shorts = 10000
		idle   = 50 * time.Millisecond
	)
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, IdleTimeout: idle})
	log, logs := observe()
	h := newOverrunHandler(n)
	rt, err := New(h.handle, WithLogger(log), WithLookupEnv(api.Env(map[string]string{"LMIGO_OVERRUN_GRACE": "1ms"})))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, n)
	release := sync.OnceFunc(func() { close(h.hung) })
	defer release()
	ctx, cancel := testContext(t)
	defer cancel()
	long := make(chan rapitest.Result, 1)
	go func() {
		r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"hang":true}`), Timeout: 30 * time.Minute})
		if err != nil {
			t.Errorf("long invocation: %v", err)
		}
		long <- r
	}()
	waitUntil(t, "the long handler", func() bool { return h.hanging.Load() == 1 })

	var next atomic.Int64
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Go(func() {
			for next.Add(1) <= shorts {
				r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`), Timeout: time.Hour})
				if err != nil || r.Err != nil || string(r.Body) != `"ok"` {
					t.Errorf("short invocation: %s %+v, %v", r.Body, r.Err, err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Its connection idle for longer than the Runtime API keeps it.
	waitUntil(t, "the long invocation's connection closed while idle", func() bool { return api.Stats().IdleClosed > 0 })
	release()
	if r := <-long; r.Err != nil || string(r.Body) != `"late"` {
		t.Fatalf("the long invocation: %s %+v", r.Body, r.Err)
	}
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatalf("not back to %d polls: %v", n, err)
	}
	stop()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if got := logs.FilterMessage(msgOverrun).Len(); got != 0 {
		t.Fatalf("%d overruns logged for invocations far from their deadline", got)
	}
	if st := api.Stats(); st.Answered() != shorts+1 || st.Responses != shorts+1 || st.Violations != 0 || st.Duplicates != 0 || st.Late != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestOverrunCountsRunning: the overrun warning counts only the handlers
// that still overrun, and names them: a held slot whose handler returned
// is not counted in the warning about the next overrun, nor named.
func TestOverrunCountsRunning(t *testing.T) {
	tests := []struct {
		name     string
		returned bool // the first handler returns before the second overruns
		want     int64
	}{
		{"both running", false, 2},
		{"first returned", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, logs := observe()
			rt := &Runtime{log: log, held: map[*slot]*overrun{}}
			rt.cfg.OverrunGrace = time.Millisecond
			rt.cfg.MaxOverruns = 0 // every overrun is held, none replaced
			past := time.Now().Add(-time.Minute)
			for i := range 2 {
				s := &slot{rt: rt}
				s.inv.RequestID = fmt.Sprintf("req-%d", i)
				s.inv.Deadline = past
				rt.slots = append(rt.slots, s)
			}
			overrun := func(s *slot) {
				s.startWatch()
				s.watch.Store(1) // the deadline passed long ago
				rt.checkOverruns(time.Now())
			}
			overrun(rt.slots[0])
			if tt.returned && !rt.slots[0].endWatch() {
				t.Fatal("the held slot was replaced")
			}
			overrun(rt.slots[1])
			warns := logs.FilterMessage(msgOverrun).All()
			if len(warns) != 2 {
				t.Fatalf("%d overrun warnings, want 2", len(warns))
			}
			last := warns[1].ContextMap()
			if last["overrunning"] != tt.want {
				t.Errorf("the warning counts %v overrunning, want %d: %v", last["overrunning"], tt.want, last)
			}
			ids, _ := last["overrunningIDs"].([]any)
			if int64(len(ids)) != tt.want || !slices.Contains(ids, any("req-1")) || tt.returned && slices.Contains(ids, any("req-0")) {
				t.Errorf("the warning names %v, want the %d running", last["overrunningIDs"], tt.want)
			}
		})
	}
}

// TestOverrunPastDeadline: a deadline already past at hand-out (the
// platform's clock and ours disagree) replaces no slot while the platform
// still holds the invocation: at N=2, a handler that ignores its deadline
// keeps its slot until the fake times the invocation out by its own
// clock, polls plus invocations within N all along; once it returns, its
// slot serves again.
func TestOverrunPastDeadline(t *testing.T) {
	const (
		n       = 2
		grace   = 50 * time.Millisecond
		timeout = time.Second // the fake's own deadline, far beyond the grace
	)
	tests := []struct {
		name     string
		deadline time.Time
	}{
		{"a minute ago", time.Now().Add(-time.Minute)},
		{"in 2001", time.Unix(1e9, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
			log, logs := observe()
			h := newOverrunHandler(n)
			rt, err := New(h.handle, WithLogger(log), WithLookupEnv(api.Env(map[string]string{
				"LMIGO_OVERRUN_GRACE": grace.String(),
				"LMIGO_WEDGED_EXIT":   "off",
			})))
			if err != nil {
				t.Fatal(err)
			}
			stop, wait := runStoppable(t, api, rt, n)
			release := sync.OnceFunc(func() { close(h.hung) })
			defer release()
			ctx, cancel := testContext(t)
			defer cancel()
			r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"hang":true}`), Timeout: timeout,
				Headers: map[string]string{"Lambda-Runtime-Deadline-Ms": strconv.FormatInt(tt.deadline.UnixMilli(), 10)}})
			if err != nil || r.Err == nil || r.Err.Type != rapitest.ErrorTypeTimeout {
				t.Fatalf("hung invocation: %+v, %v; want a timeout", r, err)
			}
			if st := api.Stats(); st.Violations != 0 || st.MaxOutstanding > n {
				t.Errorf("polls beyond N while the fake held the invocation: %+v", st)
			}
			if got := logs.FilterMessage(msgOverrun).Len(); got != 0 {
				t.Errorf("%d overrun warnings on a deadline the fake did not share", got)
			}
			release()
			waitUntil(t, "the late answer", func() bool { return api.Stats().Late == 1 })
			if err := api.WaitPolls(ctx, n); err != nil {
				t.Fatalf("not back to %d polls: %v", n, err)
			}
			stop()
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			if st := api.Stats(); st.Violations != 0 || st.MaxOutstanding > n {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// invokeRetrying invokes e with payload under request ID id (none if ""),
// again while throttled, until ctx ends.
func invokeRetrying(t *testing.T, ctx context.Context, e *rie.Emulator, id, payload string) rie.Result {
	t.Helper()
	h := http.Header{}
	if id != "" {
		h.Set(rie.RequestIDHeader, id)
	}
	for {
		r, err := e.InvokeWith(ctx, []byte(payload), h)
		if err != nil {
			t.Fatalf("invoke %s: %v\n%s", payload, err, e.Logs())
		}
		if !r.Throttled {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("invoke %s: throttled until the test's bound\n%s", payload, e.Logs())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// hangUnderEmulator sends one blocking invocation per ID, all at once, and
// returns once the emulator has answered each "Task timed out".
func hangUnderEmulator(t *testing.T, ctx context.Context, e *rie.Emulator, ids ...string) {
	t.Helper()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if r := invokeRetrying(t, ctx, e, id, `{"block":true}`); r.FunctionError != "Sandbox.Timedout" {
				t.Errorf("blocked invocation %s: %+v, want Sandbox.Timedout", id, r)
			}
		})
	}
	wg.Wait()
}

// together proves that n slots serve at once: n invocations meet at the
// bootstrap's barrier within their deadline.
func together(t *testing.T, ctx context.Context, e *rie.Emulator, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if r := invokeRetrying(t, ctx, e, "", fmt.Sprintf(`{"barrier":%d}`, n)); !r.OK() || string(r.Body) != `"together"` {
				t.Errorf("barrier invocation: %s %+v", r.Body, r)
			}
		})
	}
	wg.Wait()
}

// TestOverrunUnderEmulator: at N=4 under the emulator, 4 handlers that
// block until released: after each deadline and the grace (the default),
// the environment serves again at full N (4 invocations at once); when
// the handlers are let go, their late answers are logged, and the
// environment still serves at full N, the process alive.
func TestOverrunUnderEmulator(t *testing.T) {
	const n = 4
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/overrun"), MaxConcurrency: n, Timeout: time.Second})
	ctx, cancel := testContext(t)
	defer cancel()
	ids := []string{"hung-1", "hung-2", "hung-3", "hung-4"}
	hangUnderEmulator(t, ctx, e, ids...)
	together(t, ctx, e, n)
	if r := invokeRetrying(t, ctx, e, "", `{"release":true}`); !r.OK() {
		t.Fatalf("release: %+v", r)
	}
	for _, id := range ids {
		waitLogged(t, ctx, e, id, msgOverrunReturned)
		waitLogged(t, ctx, e, id, msgOverrun)
	}
	together(t, ctx, e, n)
	select {
	case <-e.Done():
		t.Fatalf("the runtime exited:\n%s", e.Logs())
	default:
	}
}

// TestWedgedUnderEmulator: at N=2 with LMIGO_MAX_OVERRUNS=1 under the
// emulator, three handlers that block leave no slot that can serve; after
// LMIGO_WEDGED_EXIT the runtime writes the FATAL line naming them, and
// exits, and the emulator with it (Lambda would replace the environment).
func TestWedgedUnderEmulator(t *testing.T) {
	const wedged = time.Second
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/overrun"), MaxConcurrency: 2, Timeout: time.Second,
		Env: []string{"LMIGO_MAX_OVERRUNS=1", "LMIGO_WEDGED_EXIT=" + wedged.String()}})
	ctx, cancel := testContext(t)
	defer cancel()
	hangUnderEmulator(t, ctx, e, "hung-1", "hung-2")
	hangUnderEmulator(t, ctx, e, "hung-3") // on the one slot replaced
	last := time.Now()
	select {
	case <-e.Done():
	case <-ctx.Done():
		t.Fatalf("the runtime did not exit:\n%s", e.Logs())
	}
	took := time.Since(last)
	logs := e.Logs()
	i := bytes.Index(logs, []byte(msgWedged))
	if i < 0 {
		t.Fatalf("no FATAL line:\n%s", logs)
	}
	line := logs[bytes.LastIndexByte(logs[:i], '\n')+1:]
	line = line[:bytes.IndexByte(line, '\n')]
	for _, want := range []string{`"level":"FATAL"`, "hung-1", "hung-2", "hung-3", `"pastDeadline"`, "main.main.func1"} {
		if !bytes.Contains(line, []byte(want)) {
			t.Errorf("the FATAL line lacks %s: %s", want, line)
		}
	}
	// The last "Task timed out" came before last; the wedge began at the
	// grace after it at the earliest.
	if took < wedged {
		t.Errorf("exited %v after the last timeout, before LMIGO_WEDGED_EXIT (%v)", took, wedged)
	}
	t.Logf("exited %v after the last timeout; FATAL line %d bytes", took, len(line))
}

// waitLogged waits until the emulator's log holds a line with msg for id.
func waitLogged(t *testing.T, ctx context.Context, e *rie.Emulator, id, msg string) {
	t.Helper()
	for {
		for line := range bytes.SplitSeq(e.Logs(), []byte("\n")) {
			if bytes.Contains(line, []byte(msg)) && bytes.Contains(line, []byte(`"requestId":"`+id+`"`)) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %q logged for %s:\n%s", msg, id, e.Logs())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// hangingBody streams a first chunk, then blocks until released: a
// streamed answer whose body hangs past the invocation's deadline.
type hangingBody struct {
	sent     bool
	released <-chan struct{}
	hanging  *atomic.Int64
}

func (b *hangingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "partial"), nil
	}
	b.hanging.Add(1)
	defer b.hanging.Add(-1)
	<-b.released
	return 0, io.EOF
}

// TestOverrunStreamReplacesSlot: a streamed answer whose body hangs past
// the deadline holds its slot's goroutine as a handler that never
// returns does: the slot is replaced once the deadline is past by the
// grace, and N invocations are served at once again while the body still
// hangs.
func TestOverrunStreamReplacesSlot(t *testing.T) {
	const (
		n       = 2
		grace   = 100 * time.Millisecond
		timeout = 200 * time.Millisecond
	)
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	released := make(chan struct{})
	var hanging atomic.Int64
	b := &barrier{n: n, all: make(chan struct{})}
	abort := make(chan struct{})
	rt, err := New(func(_ context.Context, ev struct{ Stream, Barrier bool }) (io.Reader, error) {
		switch {
		case ev.Stream:
			return &hangingBody{released: released, hanging: &hanging}, nil
		case ev.Barrier:
			b.arrive()
			select {
			case <-b.all:
			case <-abort:
			}
		}
		return nil, nil
	}, WithLookupEnv(api.Env(map[string]string{
		"LMIGO_OVERRUN_GRACE": grace.String(),
		"LMIGO_WEDGED_EXIT":   "off",
	})), WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, n)
	ctx, cancel := testContext(t)
	defer cancel()

	r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"Stream":true}`), Timeout: timeout})
	if err != nil || r.Err == nil {
		t.Fatalf("hung stream: %+v, %v; want it ended by its deadline", r, err)
	}
	waitUntil(t, "the hung body", func() bool { return hanging.Load() == 1 })

	bctx, bcancel := context.WithTimeout(ctx, 30*time.Second)
	defer bcancel()
	var together sync.WaitGroup
	for range n {
		together.Go(func() {
			r, err := api.Invoke(bctx, rapitest.Request{Payload: []byte(`{"Barrier":true}`), Timeout: time.Hour})
			if err != nil || r.Err != nil {
				t.Errorf("barrier invocation: %+v, %v", r, err)
			}
		})
	}
	together.Wait()
	close(abort)
	if t.Failed() {
		t.Fatalf("not %d invocations at once with a stream hung: stats %+v", n, api.Stats())
	}
	close(released)
	stop()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}
