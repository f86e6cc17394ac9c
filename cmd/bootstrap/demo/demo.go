// Package demo is the workload contract served by lmigo's reference
// bootstrap and by the aws-lambda-go reference the load test builds, so that
// both run exactly the same handler.
//
// The event is a JSON object; unknown fields are ignored:
//
//	{"size":N}          respond with exactly N bytes of valid JSON (a JSON string, N >= 2)
//	{"sleep_ms":M}      sleep M milliseconds (cut short by the deadline)
//	{"until_sigterm":true}  cut the sleep short when the process gets SIGTERM,
//	                    so that a test's handler ends when its shutdown begins
//	{"cpu_ms":C}        burn C milliseconds of CPU
//	{"stack_kib":K}     grow the goroutine's stack to K KiB (a power of two, 16 or more), as deep recursion does
//	{"fail":"msg"}      return an error with that message
//	{"panic":true}      panic
//	{"gather":K}        wait until K invocations are inside gather at once (proves overlap)
//	{"id":X}            echoed back in the small default response
//	{"announce":true}   first write "demo: started REQUEST_ID" on stdout, so that a test
//	                    knows the handler runs
//
// With none of size, fail and panic it returns a small JSON object:
// {"ok":true,"id":X,"requestId":"...","gathered":K}.
//
// HandleRaw serves the same contract as a raw handler (concurrent.RawHandler):
// it decodes the event itself and writes the response into the slot's
// buffer. Invoker serves it as a lambda.Handler of the user's own. Stream
// serves the streaming part of the contract (see StreamEvent).
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/valyala/bytebufferpool"
)

// MaxSize is the largest response the workload builds: Lambda's buffered
// response limit.
const MaxSize = 6 << 20

// Event is the demo request.
type Event struct {
	Size     int             `json:"size"`
	SleepMS  int             `json:"sleep_ms"`
	CPUMS    int             `json:"cpu_ms"`
	StackKiB int             `json:"stack_kib"`
	Fail     string          `json:"fail"`
	Panic    bool            `json:"panic"`
	Gather   int             `json:"gather"`
	ID       json.RawMessage `json:"id"`
	Announce bool            `json:"announce"`
	// UntilSIGTERM cuts the sleep short at SIGTERM.
	UntilSIGTERM bool `json:"until_sigterm"`
}

// Reply is the small default response.
type Reply struct {
	OK        bool            `json:"ok"`
	ID        json.RawMessage `json:"id,omitempty"`
	RequestID string          `json:"requestId"`
	Gathered  int             `json:"gathered,omitempty"`
}

// Error is what {"fail":...} returns.
type Error struct{ Message string }

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Handle serves one demo event, typed the way users write handlers.
func Handle(ctx context.Context, ev Event) (json.RawMessage, error) {
	if ev.Announce {
		announce(ctx)
	}
	if ev.SleepMS > 0 {
		t := time.NewTimer(time.Duration(ev.SleepMS) * time.Millisecond)
		var term <-chan struct{} // nil: never
		if ev.UntilSIGTERM {
			term = sigterm()
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		case <-term:
			t.Stop()
		}
	}
	if ev.CPUMS > 0 {
		burn(time.Duration(ev.CPUMS) * time.Millisecond)
	}
	if ev.StackKiB > 0 {
		growStack(ev.StackKiB)
	}
	if ev.Panic {
		panic("demo: panic requested")
	}
	if ev.Fail != "" {
		return nil, &Error{Message: ev.Fail}
	}
	var gathered int
	if ev.Gather > 0 {
		n, err := gather.wait(ctx, ev.Gather)
		if err != nil {
			return nil, err
		}
		gathered = n
	}
	if ev.Size > 0 {
		return Body(ev.Size)
	}
	r := Reply{OK: true, ID: ev.ID, Gathered: gathered}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		r.RequestID = lc.AwsRequestID
	}
	return json.Marshal(r)
}

func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	runtime.KeepAlive(x)
}

// growStack grows the calling goroutine's stack to kib KiB: it recurses
// through just over half of that in frames of 1 KiB, and Go doubles a
// stack that overflows, to the next power of two.
func growStack(kib int) {
	runtime.KeepAlive(deep(kib/2 + 1))
}

// deep uses n frames of 1 KiB of stack.
//
//go:noinline
func deep(n int) byte {
	var frame [1 << 10]byte
	frame[n%len(frame)] = byte(n)
	if n <= 1 {
		return frame[1]
	}
	return deep(n-1) + frame[n%len(frame)]
}

var bodies struct {
	sync.Mutex
	bySize map[int][]byte
}

// maxCached bounds the body cache: the load test uses a handful of sizes.
const maxCached = 64

// Body returns exactly n bytes of valid JSON (a string). Bodies are cached
// and shared by all invocations, so a load test measures the runtime, not
// this handler; callers must not modify them.
func Body(n int) ([]byte, error) {
	if n < 2 || n > MaxSize {
		return nil, fmt.Errorf("demo: size %d out of range 2..%d", n, MaxSize)
	}
	bodies.Lock()
	defer bodies.Unlock()
	if b, ok := bodies.bySize[n]; ok {
		return b, nil
	}
	b := make([]byte, n)
	b[0], b[n-1] = '"', '"'
	for i := 1; i < n-1; i++ {
		b[i] = 'x'
	}
	if bodies.bySize == nil {
		bodies.bySize = make(map[int][]byte)
	}
	if len(bodies.bySize) < maxCached {
		bodies.bySize[n] = b
	}
	return b, nil
}

// HandleRaw is Handle as a raw handler: the payload decoded with
// json.Unmarshal, as a typed handler's would be, and the response written
// into out, the slot's buffer. For {"size":N} that is a copy of the cached
// body into out, so a wave of N invocations holds N buffers of that size:
// the raw handler's price for owning no memory of its own. Its type is
// concurrent.RawHandler's (concurrent.Buffer is bytebufferpool.ByteBuffer),
// spelled without importing concurrent so that the aws-lambda-go reference,
// which shares this package, links nothing of lmigo.
func HandleRaw(ctx context.Context, payload []byte, out *bytebufferpool.ByteBuffer) error {
	res, err := Invoker{}.Invoke(ctx, payload)
	if err != nil {
		return err
	}
	out.B = append(out.B, res...)
	return nil
}

// Invoker is Handle as a lambda.Handler of the user's own (its method is
// lambda.Handler's, spelled without importing aws-lambda-go's lambda): it
// decodes the event with json.Unmarshal and returns Handle's bytes, for
// {"size":N} the cached body itself, which the caller must not modify.
type Invoker struct{}

// Invoke serves one demo event.
func (Invoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	return Handle(ctx, ev)
}

// barrier releases waiters in groups of k.
type barrier struct {
	mu      sync.Mutex
	waiting int
	release chan struct{}
}

var gather barrier

var errGather = errors.New("demo: gather timed out")

func (b *barrier) wait(ctx context.Context, k int) (int, error) {
	b.mu.Lock()
	if b.release == nil {
		b.release = make(chan struct{})
	}
	b.waiting++
	if b.waiting >= k {
		close(b.release)
		b.release, b.waiting = nil, 0
		b.mu.Unlock()
		return k, nil
	}
	ch := b.release
	b.mu.Unlock()
	select {
	case <-ch:
		return k, nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.release == ch {
			b.waiting--
			return 0, fmt.Errorf("%w: %d of %d invocations arrived", errGather, b.waiting+1, k)
		}
		return k, nil
	}
}

// announce writes "demo: started REQUEST_ID" on stdout in one write.
func announce(ctx context.Context) {
	id := ""
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		id = lc.AwsRequestID
	}
	_, _ = os.Stdout.Write([]byte("demo: started " + id + "\n"))
}

// sigterm returns a channel closed when the process gets SIGTERM. It
// listens from its first call on (the signal's default action, exit, is
// then off: the runtime's own handling decides).
var sigterm = sync.OnceValue(func() <-chan struct{} {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		<-c
		close(done)
	}()
	return done
})
