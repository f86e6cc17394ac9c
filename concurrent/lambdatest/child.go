package lambdatest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent"
)

// CheckIsolation serves its events in child processes of the test binary,
// each running the calling test again up to the same CheckIsolation call:
// package variables and everything else of a process start fresh there.

// childEnv names the variable that makes a test binary a child of
// CheckIsolation: its value is the path of the child's task.
const childEnv = "LAMBDATEST_CHILD"

// execEnv names the command that runs binaries of another architecture
// (go test -exec qemu-aarch64-static); the emulator harness reads it too.
const execEnv = "LMIGO_RIE_EXEC"

// aloneRuns is how many times a child serves its event alone, one after
// another: an answer that varies even alone (a random ID, a time, a
// first-invocation flag) is told from one that varies beside others.
const aloneRuns = 2

// task is what one child process serves.
type task struct {
	Test string `json:"test"` // the test's name, as t.Name gives it
	Call int    `json:"call"` // which CheckIsolation call of the test, from 0
	N    int    `json:"n"`    // the runtime's N: the number of events
	// Alone is the index of the one event served alone; -1 serves all the
	// events at once, as round Round.
	Alone  int      `json:"alone"`
	Round  int      `json:"round"`
	Events [][]byte `json:"events"`
	Report string   `json:"report"` // where the child writes its report
}

// report is what a child served, for the parent to judge.
type report struct {
	// Served holds each round's results by event, or, served alone, the
	// result of each run.
	Served   [][]wireResult `json:"served"`
	Late     []lateReport   `json:"late"`
	Failures []string       `json:"failures"` // what the child's runtime failed
	Logs     []string       `json:"logs"`     // what it logged to the test
}

// wireResult is a Result as a child reports it.
type wireResult struct {
	RequestID string   `json:"requestId"`
	TraceID   string   `json:"traceId"`
	Payload   []byte   `json:"payload"`
	Err       *Error   `json:"err"`
	Logs      []string `json:"logs"`
	Metrics   []string `json:"metrics"`
}

func toWire(r Result) wireResult {
	w := wireResult{RequestID: r.RequestID, TraceID: r.TraceID, Payload: r.Payload, Logs: r.Logs, Metrics: r.Metrics}
	if r.Err != nil {
		var e *Error
		if !errors.As(r.Err, &e) {
			e = &Error{Type: "lambdatest.Error", Message: r.Err.Error()}
		}
		w.Err = e
	}
	return w
}

func (w wireResult) result() Result {
	r := Result{RequestID: w.RequestID, TraceID: w.TraceID, Payload: w.Payload, Logs: w.Logs, Metrics: w.Metrics}
	if w.Err != nil {
		r.Err = w.Err
	}
	return r
}

// lateReport is a line written for an invocation that had ended.
type lateReport struct {
	When   string `json:"when"`
	Line   string `json:"line"`
	Metric bool   `json:"metric"`
}

// calls counts the CheckIsolation calls of each run of a test, so that a
// child finds the call its parent made. A run's count ends with it: go
// test -count runs a test again under its name.
var calls struct {
	sync.Mutex
	n map[string]int
}

func nextCall(tb testing.TB) int {
	name := tb.Name()
	calls.Lock()
	defer calls.Unlock()
	if calls.n == nil {
		calls.n = map[string]int{}
	}
	n, seen := calls.n[name]
	if !seen {
		tb.Cleanup(func() {
			calls.Lock()
			defer calls.Unlock()
			delete(calls.n, name)
		})
	}
	calls.n[name]++
	return n
}

// childTask is the task of this process when it is a child.
var childTask = sync.OnceValues(func() (task, bool) {
	path := os.Getenv(childEnv)
	if path == "" {
		return task{}, false
	}
	var t task
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil {
		// Serves nothing: the parent reports this output.
		fmt.Fprintf(os.Stderr, "lambdatest: the task of this child process does not read: %v\n", err)
		return task{}, true
	}
	return t, true
})

// serveTask serves a child's task through a runtime of its own, writes
// the report and skips the rest of the test: the parent judges.
func serveTask(tb testing.TB, h concurrent.StreamInvoker, c config, lookup func(string) (string, bool), tk task) {
	rec := &recorder{TB: tb}
	var rep report
	done := make(chan struct{})
	go func() { // recorder.Fatalf ends this goroutine alone
		defer close(done)
		serve(rec, h, c, lookup, tk, &rep)
	}()
	<-done
	rep.Failures, rep.Logs = rec.take()
	b, err := json.Marshal(&rep)
	if err == nil {
		// Written whole, then renamed: a report is complete or absent.
		err = os.WriteFile(tk.Report+".part", b, 0o600)
	}
	if err == nil {
		err = os.Rename(tk.Report+".part", tk.Report)
	}
	if err != nil {
		tb.Fatalf("lambdatest: writing the report for CheckIsolation: %v", err)
	}
	tb.Skip("lambdatest: served for CheckIsolation in a child process; the parent judges")
}

func serve(tb testing.TB, h concurrent.StreamInvoker, c config, lookup func(string) (string, bool), tk task, rep *report) {
	g := &gated{h: h}
	c.n = tk.N
	f := startConfig(tb, g, c, lookup)
	late := func(when string) {
		for _, l := range f.out.takeLate() {
			rep.Late = append(rep.Late, lateReport{When: when, Line: l.line, Metric: l.metric})
		}
	}
	defer func() {
		f.stop()
		late("as the runtime stopped") // by a goroutine its handler left
	}()
	if tk.Alone >= 0 {
		for range aloneRuns {
			res := f.Invoke(tk.Events[0])
			rep.Served = append(rep.Served, []wireResult{toWire(res)})
			late(fmt.Sprintf("while event %d was served alone", tk.Alone))
		}
		return
	}
	// One round, on a runtime that has served nothing: a round in a process
	// of its own meets state no invocation has built yet.
	if err := f.api.WaitPolls(f.ctx, f.rt.Config().Slots); err != nil {
		tb.Errorf("lambdatest: the runtime stopped: %v", err)
		return
	}
	// Fewer slots than events (LMIGO_SLOTS) serve fewer at once.
	g.hold(min(len(tk.Events), f.rt.Config().Slots))
	beside := f.invokeAll(tk.Events)
	g.hold(0)
	// The round ends when the runtime can serve again: a handler that
	// overran is replaced, or the runtime wedges (exit fails the test).
	if err := f.api.WaitPolls(f.ctx, f.rt.Config().Slots); err != nil && !f.exited.Load() {
		tb.Errorf("lambdatest: the runtime stopped after the round: %v", err)
	}
	w := make([]wireResult, len(beside))
	for i, r := range beside {
		w[i] = toWire(r)
	}
	rep.Served = append(rep.Served, w)
	late(fmt.Sprintf("in round %d", tk.Round))
}

// invokeAll invokes every event at once, in a random order, and returns
// their results by event.
func (f *Function) invokeAll(events [][]byte) []Result {
	res := make([]Result, len(events))
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for _, i := range rand.Perm(len(events)) {
		wg.Go(func() {
			<-gate
			res[i] = f.Invoke(events[i])
		})
	}
	close(gate)
	wg.Wait()
	return res
}

// recorder is the testing.TB of a child's runtime: it keeps what would
// fail the test or be logged to it, for the parent to report.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	logs     []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.logs) < maxOther {
		r.logs = append(r.logs, fmt.Sprintf(format, args...))
	}
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}

func (r *recorder) take() (failures, logs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures, r.logs
}

// outcome is how a child ended: its report, or why there is none.
type outcome struct {
	rep    *report
	err    error  // the process's end, when it did not end well
	output string // what it wrote, cut to a bound
}

// races is the race detector's first report in the child's output, and
// how many it wrote. A report is a line "WARNING: DATA RACE" after a line
// of "=" (the detector's own frame), so that the words quoted elsewhere
// (in a test's own output) are not taken for one.
func (o outcome) races() (first string, n int) {
	const start, end = "==================\nWARNING: DATA RACE\n", "\n=================="
	n = strings.Count(o.output, start)
	if n == 0 {
		return "", 0
	}
	first = o.output[strings.Index(o.output, start)+len("==================\n"):]
	if e := strings.Index(first, end); e >= 0 {
		first = first[:e]
	}
	return strings.TrimSpace(first), n
}

// children runs the child processes of one CheckIsolation call: one for
// each round serving the events at once, one per event serving it alone,
// at most GOMAXPROCS at a time. together are the rounds' outcomes, alone
// the others' by event.
func children(tb testing.TB, call, rounds int, events [][]byte) (together, alone []outcome, err error) {
	dir, err := os.MkdirTemp("", "lambdatest-")
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	ctx, cancel := childContext(tb)
	defer cancel()
	var tasks []task
	for r := 1; r <= rounds; r++ {
		tasks = append(tasks, task{Test: tb.Name(), Call: call, N: len(events), Alone: -1, Round: r, Events: events})
	}
	for i, e := range events {
		tasks = append(tasks, task{Test: tb.Name(), Call: call, N: len(events), Alone: i, Events: [][]byte{e}})
	}
	outs := make([]outcome, len(tasks))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i := range tasks {
		tasks[i].Report = filepath.Join(dir, strconv.Itoa(i)+".report")
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			outs[i] = runChild(ctx, dir, i, tasks[i])
		})
	}
	wg.Wait()
	return outs[:rounds], outs[rounds:], nil
}

// childContext ends children before the test's deadline, so that the
// test can still say why they did not finish.
func childContext(tb testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			return context.WithDeadline(context.Background(), deadline.Add(-time.Until(deadline)/20))
		}
	}
	return context.WithCancel(context.Background())
}

func runChild(ctx context.Context, dir string, i int, tk task) outcome {
	b, err := json.Marshal(tk)
	if err != nil {
		return outcome{err: err}
	}
	path := filepath.Join(dir, strconv.Itoa(i)+".task")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return outcome{err: err}
	}
	args := append(strings.Fields(os.Getenv(execEnv)), os.Args[0], "-test.run="+runPattern(tk.Test), "-test.count=1")
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if deadline, ok := ctx.Deadline(); ok {
		// The child's own timeout ends it first, with its goroutines.
		args = append(args, "-test.timeout="+(time.Until(deadline)*9/10).String())
	} else if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() != "0s" {
		args = append(args, "-test.timeout="+f.Value.String())
	}
	args = append(args, userArgs()...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = childEnviron(path)
	var out boundedOutput
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second // a grandchild holding the output ends no wait
	runErr := cmd.Run()
	o := outcome{output: out.String()}
	if runErr != nil {
		o.err = runErr
	}
	b, err = os.ReadFile(tk.Report)
	if err != nil {
		return o
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		o.err = fmt.Errorf("its report does not read: %w", err)
		return o
	}
	o.rep = &rep
	return o
}

// runPattern is a -test.run pattern selecting the test named name alone.
func runPattern(name string) string {
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = "^" + regexp.QuoteMeta(e) + "$"
	}
	return strings.Join(elems, "/")
}

// userArgs are the test binary's arguments of the test's own flags: the
// child takes the same path through the test.
func userArgs() []string {
	var out []string
	for _, a := range os.Args[1:] {
		if !strings.HasPrefix(a, "-test.") && !strings.HasPrefix(a, "--test.") {
			out = append(out, a)
		}
	}
	return out
}

// childEnviron is the process's environment with the child's task, and
// without the race detector's one-second pause at exit.
func childEnviron(taskPath string) []string {
	env := make([]string, 0, len(os.Environ())+2)
	race := ""
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, childEnv+"="):
		case strings.HasPrefix(kv, "GORACE="):
			race = strings.TrimPrefix(kv, "GORACE=")
		default:
			env = append(env, kv)
		}
	}
	if !strings.Contains(race, "atexit_sleep_ms") {
		race = strings.TrimSpace(race + " atexit_sleep_ms=0")
	}
	return append(env, "GORACE="+race, childEnv+"="+taskPath)
}

// boundedOutput keeps the start of a child's output, where the race
// detector's first report and a crash's cause are, and its end.
type boundedOutput struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte
	dropped int
}

const (
	maxHead = 256 << 10
	maxTail = 16 << 10
)

func (b *boundedOutput) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := maxHead - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - maxTail; over > 0 {
		b.dropped += over
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

func (b *boundedOutput) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return string(b.head) + string(b.tail)
	}
	return fmt.Sprintf("%s\n... (%d bytes left out)\n%s", b.head, b.dropped, b.tail)
}

// last is the end of s, at most n bytes, from a line's start.
func last(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return "..." + s
}

// cut is the start of s, at most n bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
