package lambdatest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/internal/testhook"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// Function is a handler served by a runtime at N slots against a fake
// Runtime API. Its methods are safe for concurrent use.
type Function struct {
	tb     testing.TB
	api    *rapitest.Server
	rt     *concurrent.Runtime
	n      int
	ctx    context.Context    // done once the runtime has stopped
	cancel context.CancelFunc // nil once stop has run
	halt   context.CancelFunc // the same, kept: exit stops the runtime
	exited atomic.Bool        // exit was called
	done   chan error
	stopMu sync.Mutex
	out    output
	// counts: Invoke counts the goroutines left running (Result.Leftover);
	// CheckIsolation's invocations do not, which saves a profile each.
	counts bool
}

// Result is how one invocation ended, as its caller reads it.
type Result struct {
	// RequestID is the invocation's request ID.
	RequestID string
	// TraceID is the invocation's trace header, Lambda-Runtime-Trace-Id
	// (concurrent.TraceID): "Root=1-...;Parent=...;Sampled=0".
	TraceID string
	// Payload is the answer's body; nil when Err is set.
	Payload []byte
	// Err is nil on success, else an *Error: the error type and message
	// that Lambda's Invoke API returns to the caller.
	Err error
	// Logs are the JSON lines written for this invocation before its
	// answer: by concurrent.Logger, concurrent.Slog and
	// concurrent.SlogHandler, and by the runtime about it. Each carries
	// this invocation's requestId.
	Logs []string
	// Metrics are the EMF documents this invocation wrote (package
	// concurrent/metrics), one line each.
	Metrics []string
	// Leftover counts the goroutines its handler started that still ran
	// once the answer came: they outlived the invocation (leftover.go).
	// Work started with concurrent.Go is waited for, and counts 0.
	// CheckIsolation does not count them: 0 in the Results it compares.
	Leftover int
	// Detached counts the goroutines concurrent.GoDetached started for
	// it that still ran then, which are meant to outlive it.
	Detached int
}

// Error is a function error as the caller of an invocation reads it.
type Error struct {
	Type    string // errorType: the handler's error type, or the platform's (Sandbox.Timedout)
	Message string // errorMessage
}

// Error gives the error type and the message.
func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Start serves handler through the runtime a bootstrap runs
// (concurrent.New and Run, with the options of WithRuntime), against a new fake Runtime API at N
// slots: DefaultConcurrency unless WithConcurrency says. The runtime reads
// the process's environment as a bootstrap does (a t.Setenv before Start
// reaches it), with the fake's address, N and AWS_LAMBDA_LOG_FORMAT=JSON on
// top. Start returns once every slot polls. At t.Cleanup the runtime is
// stopped and waited for, and the test fails if the runtime broke exactly
// once (a duplicate, unknown or cross-wired answer, one without its
// invocation's ID) or polled beyond N. A runtime that would exit (every
// slot held by a handler that overran its deadline, past
// LMIGO_WEDGED_EXIT) fails the test instead, naming the hung invocations,
// and stops serving. The soft memory limit Run sets from the memory size,
// and _X_AMZN_TRACE_ID, which a runtime at N=1 sets to each invocation's
// trace, are put back once the last Function has stopped.
func Start(t testing.TB, handler any, opts ...Option) *Function {
	t.Helper()
	f := start(t, handler, opts)
	f.counts = true
	t.Cleanup(f.stop)
	return f
}

// defaults are the variables the platform sets on a managed instance,
// used where the process's environment does not set them.
var defaults = map[string]string{
	"AWS_LAMBDA_INITIALIZATION_TYPE":  "lambda-managed-instances",
	"AWS_LAMBDA_FUNCTION_NAME":        "lambdatest",
	"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
	"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048",
	"AWS_REGION":                      "us-east-1",
}

func start(t testing.TB, handler any, opts []Option) *Function {
	t.Helper()
	c, lookup, err := readConfig(opts)
	if err != nil {
		t.Fatalf("lambdatest: %v", err)
	}
	return startConfig(t, handler, c, lookup)
}

// held is what Run changes in the process, given back once the last
// running Function has stopped: the soft memory limit Run sets from the
// memory size, and _X_AMZN_TRACE_ID, which a runtime at N=1 sets to each
// invocation's trace.
var held struct {
	sync.Mutex
	running     int
	memoryLimit int64
	trace       string
	traceSet    bool
}

const traceEnv = "_X_AMZN_TRACE_ID"

func holdProcess() {
	held.Lock()
	defer held.Unlock()
	if held.running == 0 {
		held.memoryLimit = debug.SetMemoryLimit(-1)
		held.trace, held.traceSet = os.LookupEnv(traceEnv)
	}
	held.running++
}

func releaseProcess() {
	held.Lock()
	defer held.Unlock()
	if held.running--; held.running == 0 {
		debug.SetMemoryLimit(held.memoryLimit)
		if held.traceSet {
			_ = os.Setenv(traceEnv, held.trace)
		} else {
			_ = os.Unsetenv(traceEnv)
		}
	}
}

func startConfig(t testing.TB, handler any, c config, lookup func(string) (string, bool)) *Function {
	t.Helper()
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: c.n, Queue: true, Timeout: c.timeout})
	if err != nil {
		t.Fatalf("lambdatest: %v", err)
	}
	f := &Function{tb: t, api: api, n: c.n, done: make(chan error, 1)}
	f.out.init()
	top := map[string]string{
		"AWS_LAMBDA_RUNTIME_API":     api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(c.n),
		// Lines are told apart by their requestId.
		"AWS_LAMBDA_LOG_FORMAT": "JSON",
	}
	env := func(k string) (string, bool) {
		if v, ok := top[k]; ok {
			return v, true
		}
		if v, ok := lookup(k); ok {
			return v, true
		}
		v, ok := defaults[k]
		return v, ok
	}
	all := append(append([]concurrent.Option(nil), c.runtime...), concurrent.WithLookupEnv(env),
		testhook.Replace(testhook.Process{Logs: writer{&f.out, handlerLine}, Own: writer{&f.out, runtimeLine},
			Metrics: writer{&f.out, metricDoc}, Exit: f.exit, Environ: c.environ}).(concurrent.Option))
	f.rt, err = concurrent.New(handler, all...)
	if err != nil {
		_ = api.Close()
		t.Fatalf("lambdatest: %v", err)
	}
	holdProcess()
	var run context.Context
	run, f.cancel = context.WithCancel(context.Background())
	f.halt = f.cancel
	// Invoke waits for a slot until the runtime has stopped, no longer.
	var stopped context.CancelFunc
	f.ctx, stopped = context.WithCancel(context.Background())
	go func() {
		err := f.rt.Run(run)
		stopped()
		f.done <- err
	}()
	if err := api.WaitPolls(f.ctx, f.rt.Config().Slots); err != nil {
		f.stop()
		t.Fatalf("lambdatest: the runtime stopped before it polled: %v", err)
	}
	f.logRuntime()
	return f
}

// exit is where the runtime would end the process, on Lambda so that it
// replaces a wedged environment. Here it fails the test that owns the
// runtime and stops the runtime, so that later invocations fail at once;
// the test process lives on.
func (f *Function) exit(code int) {
	f.exited.Store(true)
	defer f.halt()
	ids := f.out.wedged()
	if len(ids) == 0 {
		ids = []string{"none listed"}
	}
	f.tb.Errorf("lambdatest: the runtime is wedged: every slot is held by a handler that overran its deadline "+
		"and ignores its context (request IDs %s); on Lambda it would exit %d now", strings.Join(ids, ", "), code)
}

// stop ends the runtime and the fake, once, and checks the accounting.
func (f *Function) stop() {
	f.tb.Helper()
	f.stopMu.Lock()
	defer f.stopMu.Unlock()
	if f.cancel == nil {
		return
	}
	f.cancel()
	f.cancel = nil
	if err := <-f.done; err != nil {
		f.tb.Errorf("lambdatest: the runtime stopped: %v", err)
	}
	releaseProcess()
	_ = f.api.Close()
	st := f.api.Stats()
	if st.Duplicates+st.Unknown+st.CrossWired+st.NoEcho+st.Violations > 0 {
		f.tb.Errorf("lambdatest: the runtime broke exactly once or N=%d: %d duplicate, %d unknown, %d cross-wired, %d unechoed answers, %d polls beyond N",
			f.n, st.Duplicates, st.Unknown, st.CrossWired, st.NoEcho, st.Violations)
	}
	f.logRuntime()
}

// logRuntime logs the runtime's lines of no invocation written since it
// last did (its start lines, a WARN for an LMIGO_ typo, its stop line):
// go test shows them with -v, and when the test fails, at the test's call
// of Start.
func (f *Function) logRuntime() {
	f.tb.Helper()
	for _, l := range f.out.takeOther() {
		f.tb.Logf("runtime: %s", l)
	}
}

// Invoke hands payload to the runtime and returns how the invocation
// ended. More calls than N at once wait for a free slot, as they would not
// on Lambda (it throttles them). A call that cannot be made (the runtime
// has stopped) fails the test and returns a Result whose Err says why.
// Invoke is safe for concurrent use; the caller may reuse payload once it
// returns.
func (f *Function) Invoke(payload []byte) Result {
	trace := newTraceID()
	r, err := f.api.Invoke(f.ctx, rapitest.Request{Payload: payload, TraceID: trace})
	if err != nil {
		f.tb.Helper() // here alone: Helper takes the test's lock
		f.tb.Errorf("lambdatest: invoke: %v", err)
		return Result{RequestID: r.RequestID, TraceID: trace,
			Err: &Error{Type: "lambdatest.InvokeFailed", Message: err.Error()}}
	}
	res := Result{RequestID: r.RequestID, TraceID: trace, Payload: r.Body}
	if r.Err != nil {
		res.Payload, res.Err = nil, callerError(r.Err)
	}
	res.Logs, res.Metrics = f.out.take(r.RequestID)
	if !f.counts {
		return res
	}
	if res.Leftover, res.Detached, err = leftovers(r.RequestID); err != nil {
		f.tb.Helper()
		f.tb.Errorf("lambdatest: cannot count the goroutines left running: %v", err)
	}
	return res
}

// newTraceID is an X-Ray trace header of random IDs, unique across the
// processes of one CheckIsolation.
func newTraceID() string {
	return fmt.Sprintf("Root=1-%08x-%08x%016x;Parent=%016x;Sampled=0",
		time.Now().Unix(), rand.Uint32(), rand.Uint64(), rand.Uint64())
}

// callerError is what Lambda's Invoke API gives the caller of a failed
// invocation: its error document's errorType and errorMessage.
func callerError(fe *rapitest.FunctionError) *Error {
	var doc struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	if json.Unmarshal(fe.Body, &doc) != nil {
		return &Error{Type: fe.Type, Message: string(fe.Body)}
	}
	if doc.Type == "" {
		doc.Type = fe.Type
	}
	return &Error{Type: doc.Type, Message: doc.Message}
}
