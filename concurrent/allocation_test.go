//go:build !race

package concurrent

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"go.uber.org/zap"
)

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

var tinyRaw = RawHandler(func(_ context.Context, _ []byte, out *Buffer) error {
	out.B = append(out.B, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`...)
	return nil
})

// TestAllocsInvocation gates what one tiny invocation allocates through the
// whole runtime: poll, context, handler, answer with the next poll queued,
// buffers back, all on the slot's goroutine. The runtime's own part
// is two allocations: the Invocation's strings (rapi) and the invocation's
// context (newInvocation). At N=1, _X_AMZN_TRACE_ID is set for
// aws-lambda-go's sake: os.Setenv allocates its "key=value" string (and,
// with cgo, C copies of both). The typed handler's extra allocations are
// the adapter's (reflect.Value.Call, event decoding; handler.go) and the
// demo handler's own (json.Marshal of its reply).
func TestAllocsInvocation(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		handler   any
		payload   string
		want      string // the answer's body
		maxAllocs float64
		maxBytes  float64
	}{
		{"raw", 2, tinyRaw, `{}`, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`, 2, 512},
		{"raw N=1", 1, tinyRaw, `{}`, `{"ok":true,"requestId":"8476a536-e9f4-11e8"}`, 4, 640},
		{"rawmessage", 2, func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) { return ev, nil }, `{"id":1}`, `{"id":1}`, 3, 512},
		{"noio", 2, func(context.Context) error { return nil }, `{}`, `null`, 2, 512},
		{"demo typed", 2, demo.Handle, `{}`, "", 12, 1088},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPeer(t, []byte(tt.payload))
			runPeer(t, p, tt.n, tt.handler)
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
