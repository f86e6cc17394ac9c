//go:build !race

package concurrent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
	"go.uber.org/zap"
)

// raceEnabled: the race detector allocates, so allocation gates skip.
const raceEnabled = false

// perInvocation counts what k invocations through the peer allocate, in
// the whole process, per invocation (as testing.AllocsPerRun, plus bytes).
// The peer allocates nothing: the count is the runtime's.
func perInvocation(t *testing.T, p *peer, k int) (allocs, bytes float64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p.invoke(t) // warm
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range k {
		p.invoke(t)
	}
	runtime.ReadMemStats(&after)
	// Whole allocations, as testing.AllocsPerRun counts: the runtime's
	// background goroutines (timers) add a few hundredths.
	return float64((after.Mallocs - before.Mallocs) / uint64(k)), float64(after.TotalAlloc-before.TotalAlloc) / float64(k)
}

// TestAllocsInvocation gates what one tiny invocation allocates through the
// whole runtime: poll, context, handler, answer with the next poll queued,
// buffers back, all on the slot's goroutine. The runtime's own part
// is two allocations: the Invocation's strings (rapi) and the invocation's
// context (newInvocation). At N=1, _X_AMZN_TRACE_ID is set for
// aws-lambda-go's sake: os.Setenv allocates its "key=value" string (and,
// with cgo, C copies of both). The typed handler's extra allocations are
// the adapter's (reflect.Value.Call, event decoding; handler.go) and the
// demo handler's own (json.Marshal of its reply). The rows run with
// everything off (runPeer); the profiler labels (LMIGO_LABELS, on by
// default) add three allocations of their own: their label set, its map
// and its context (pprof.WithLabels).
func TestAllocsInvocation(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		handler   any
		payload   string
		want      string // the answer's body
		maxAllocs float64
		maxBytes  float64
		vars      env
	}{
		{"raw", 2, tinyRaw, `{}`, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`, 2, 512, nil},
		{"raw N=1", 1, tinyRaw, `{}`, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`, 4, 640, nil},
		{"rawmessage", 2, func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) { return ev, nil }, `{"id":1}`, `{"id":1}`, 3, 512, nil},
		{"noio", 2, func(context.Context) error { return nil }, `{}`, `null`, 2, 512, nil},
		{"demo typed", 2, demo.Handle, `{}`, "", 12, 1088, nil},
		{"raw labels", 2, tinyRaw, `{}`, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`, 5, 656, env{"LMIGO_LABELS": "on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPeer(t, []byte(tt.payload))
			runPeer(t, p, tt.n, tt.handler, tt.vars)
			allocs, bytes := perInvocation(t, p, 2000)
			path, body := p.last()
			t.Logf("%.2f allocs, %.0f B per invocation; answer %s %s", allocs, bytes, path, body)
			if tt.want != "" && body != tt.want {
				t.Fatalf("answer %q, want %q", body, tt.want)
			}
			if len(path) < len("/response") || path[len(path)-len("/response"):] != "/response" {
				t.Fatalf("answered at %s", path)
			}
			if allocs > tt.maxAllocs || bytes > tt.maxBytes {
				t.Fatalf("%.2f allocs and %.0f B per invocation, want <= %v and <= %v B", allocs, bytes, tt.maxAllocs, tt.maxBytes)
			}
		})
	}
}

var sinkString string

// TestAllocsInvocationContext: the context of an invocation is one
// allocation of one size class, and reading it, and ending it when
// nobody asked for Done, allocate nothing.
func TestAllocsInvocationContext(t *testing.T) {
	if size := unsafe.Sizeof(invocationContext{}); size > 288 {
		t.Errorf("invocationContext is %d bytes, past the 288-byte size class", size)
	}
	log := zap.NewNop()
	deadline := time.Now().Add(time.Hour)
	lc := &lambdacontext.LambdaContext{AwsRequestID: "r", InvokedFunctionArn: "arn", TenantID: "t"}
	var ctx *invocationContext
	if a := testing.AllocsPerRun(1000, func() {
		ctx = newInvocation(context.Background(), deadline, lc, "Root=1-a", log)
	}); a != 1 {
		t.Errorf("newInvocation: %v allocs, want 1", a)
	}
	if a := testing.AllocsPerRun(1000, func() {
		lc, _ := lambdacontext.FromContext(ctx)
		sinkString = lc.AwsRequestID
		sinkString = RequestID(ctx)
		sinkString = TraceID(ctx)
		sinkString = TenantID(ctx)
		_, _ = ctx.Deadline()
		_ = ctx.Err()
	}); a != 0 {
		t.Errorf("reading the context: %v allocs, want 0", a)
	}
	if a := testing.AllocsPerRun(1000, func() {
		c := newInvocation(context.Background(), deadline, lc, "Root=1-a", log)
		c.cancel()
	}); a != 1 {
		t.Errorf("newInvocation + cancel: %v allocs, want 1", a)
	}
}

// TestAllocsNoMetrics: with metrics on, an invocation that records none
// and starts no work allocates nothing past its context, however it ends
// (finish runs on every invocation).
func TestAllocsNoMetrics(t *testing.T) {
	rt := &Runtime{emf: &emf.Env{Namespace: "Shop", Out: io.Discard, Limit: maxLogLine}}
	rt.emf.TakeColdStart() // taken by the process's first invocation
	log := zap.NewNop()
	deadline := time.Now().Add(time.Hour)
	lc := &lambdacontext.LambdaContext{AwsRequestID: "r"}
	if a := testing.AllocsPerRun(1000, func() {
		c := newInvocation(context.Background(), deadline, lc, "Root=1-a", log)
		if err := rt.finish(c, nil); err != nil {
			t.Fatal(err)
		}
		c.cancel()
	}); a != 1 {
		t.Errorf("an invocation without metrics or work: %v allocs, want 1 (its context)", a)
	}
}

// The race detector doubles the stack guard and grows frames: the bound
// checked here is the one a bootstrap runs with.

// parkedStackBound is the most stack a slot may use while it waits for
// its next invocation. Go halves a parked goroutine's stack at a GC only
// while it uses less than a quarter of it, 800 bytes of guard included:
// below 1248 bytes, the 8 KiB a serving slot grows to goes back to 4 KiB
// after a burst.
const parkedStackBound = 2048 - 800 - 1

// TestParkedSlotStack: a slot parked on its next poll, after it served,
// uses less stack than parkedStackBound. Read from the goroutine dump of a
// child process (GOTRACEBACK=system gives each frame's stack pointer),
// which serves one invocation on each of its slots, waits until every
// other slot is parked, and ends itself with SIGQUIT.
func TestParkedSlotStack(t *testing.T) {
	if os.Getenv("LMIGO_TEST_STACK_CHILD") == "1" {
		parkedStackChild(t)
		return
	}
	ctx, cancel := testContext(t)
	defer cancel()
	// Built for another architecture (make test-arm64), the binary runs
	// through the same wrapper as the emulator's bootstrap.
	args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestParkedSlotStack$", "-test.count=1")
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "LMIGO_TEST_STACK_CHILD=1", "GOTRACEBACK=system")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || !strings.Contains(string(out), "SIGQUIT") {
		t.Fatalf("child: %v (%T), want its SIGQUIT dump:\n%s", err, ee, lastLines(out, 40))
	}
	parked, most := 0, uint64(0)
	for g := range strings.SplitSeq(string(out), "\n\n") {
		if !parkedSlot(g) {
			continue
		}
		parked++
		used := stackUsed(t, g)
		most = max(most, used)
		if used > parkedStackBound {
			t.Errorf("a parked slot uses %d bytes of stack, want at most %d:\n%s", used, parkedStackBound, g)
		}
	}
	t.Logf("%d slots parked, using at most %d bytes of stack (bound %d)", parked, most, parkedStackBound)
	if parked < 2 {
		t.Fatalf("%d slots parked on their next poll in the dump:\n%s", parked, lastLines(out, 80))
	}
}

var frameSP = regexp.MustCompile(`fp=0x([0-9a-f]+) sp=0x([0-9a-f]+)`)

// stackUsed is the stack a goroutine of a GOTRACEBACK=system dump uses:
// from the top of its stack to its innermost stack pointer. A stack of 4
// KiB or more is aligned to its size, so its top is its outermost frame's
// rounded up to 4 KiB (this goroutine's is: it grew past 2 KiB).
func stackUsed(t *testing.T, g string) uint64 {
	var hi, lo uint64
	for _, m := range frameSP.FindAllStringSubmatch(g, -1) {
		fp, err1 := strconv.ParseUint(m[1], 16, 64)
		sp, err2 := strconv.ParseUint(m[2], 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("frame %q", m[0])
		}
		hi = max(hi, fp)
		if lo == 0 || sp < lo {
			lo = sp
		}
	}
	if lo == 0 {
		t.Fatalf("no frame pointers in the dump (GOTRACEBACK=system):\n%s", g)
	}
	return (hi+4095)&^4095 - lo
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(string(b), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// parkedStackChild serves one invocation on each slot, all at once, with
// the demo handler growing its stack to 32 KiB and answering over 64 KiB
// (rapi's lazyMaxBody: the post's answer is read at once, and the slot
// parks on its queued poll, not on that answer), waits until every slot
// but the one serving the last invocation is parked on its next poll, and
// dumps every goroutine.
func parkedStackChild(t *testing.T) {
	const n = 8
	ctx, cancel := testContext(t)
	defer cancel()
	api := newAPI(t, rapitest.Options{MaxConcurrency: n})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)},
		func(ctx context.Context, ev demo.Event) (json.RawMessage, error) {
			if ev.Fail == "dump" {
				waitParked(ctx, n-1)
				_ = syscall.Kill(os.Getpid(), syscall.SIGQUIT)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return demo.Handle(ctx, ev)
		})
	deep := fmt.Appendf(nil, `{"stack_kib":32,"gather":%d,"size":%d}`, n, 65<<10)
	done := make(chan error, n)
	for range n {
		go func() {
			r, err := api.Invoke(ctx, rapitest.Request{Payload: deep})
			if err == nil && r.Err != nil {
				err = r.Err
			}
			done <- err
		}()
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatal(err)
	}
	_, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"fail":"dump"}`)})
	t.Fatalf("the dump did not end the process: %v", err)
}

// waitParked returns once n slots' goroutines are parked on their next
// poll, or ctx ends.
func waitParked(ctx context.Context, n int) {
	buf := make([]byte, 1<<20)
	for ctx.Err() == nil {
		parked := 0
		for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if parkedSlot(g) {
				parked++
			}
		}
		if parked >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// parkedSlot reports whether goroutine dump g is a slot's, parked on its
// next poll (not on the answer to its last post, which ends within a
// second).
func parkedSlot(g string) bool {
	return strings.Contains(g, "concurrent.runSlot(") && strings.Contains(g, "[IO wait") &&
		strings.Contains(g, "(*Conn).Next") && !strings.Contains(g, "readLeft")
}
