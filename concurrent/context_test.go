package concurrent

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"go.uber.org/zap"
)

type ctxKey struct{}

func testCtx(parent context.Context, deadline time.Time) *invocationContext {
	return newInvocation(parent, deadline, &lambdacontext.LambdaContext{AwsRequestID: "req-1", TenantID: "t"}, "Root=1-a", zap.NewNop())
}

// newInvocationContext is an invocation context without a deadline, for
// the logging tests.
func newInvocationContext(parent context.Context, lc *lambdacontext.LambdaContext, traceID string, base *zap.Logger) *invocationContext {
	return newInvocation(parent, time.Time{}, lc, traceID, base)
}

// closedWithin reports whether ch closes within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// TestInvocationContextEnds: the deadline and the end of the invocation
// reach the context, its Done channel whenever it was asked for, and
// every context derived from it, as with context.WithDeadline.
func TestInvocationContextEnds(t *testing.T) {
	far := time.Now().Add(time.Hour)
	tests := []struct {
		name     string
		parent   func() (context.Context, context.CancelFunc)
		deadline time.Time
		end      func(c *invocationContext, parentCancel context.CancelFunc)
		want     error
		doneLate bool // ask for Done only after the end
	}{
		{"cancel", bg, far, func(c *invocationContext, _ context.CancelFunc) { c.cancel() }, context.Canceled, false},
		{"cancel, Done after", bg, far, func(c *invocationContext, _ context.CancelFunc) { c.cancel() }, context.Canceled, true},
		{"deadline", bg, time.Now().Add(20 * time.Millisecond), func(*invocationContext, context.CancelFunc) {}, context.DeadlineExceeded, false},
		{"deadline, Done after", bg, time.Now().Add(-time.Millisecond), func(*invocationContext, context.CancelFunc) {}, context.DeadlineExceeded, true},
		{"cancellable parent, cancel", cancellable, far, func(c *invocationContext, _ context.CancelFunc) { c.cancel() }, context.Canceled, false},
		{"cancellable parent, parent cancelled", cancellable, far, func(_ *invocationContext, p context.CancelFunc) { p() }, context.Canceled, false},
		{"cancellable parent, deadline", cancellable, time.Now().Add(20 * time.Millisecond), func(*invocationContext, context.CancelFunc) {}, context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, parentCancel := tt.parent()
			defer parentCancel()
			c := testCtx(parent, tt.deadline)
			defer c.cancel()
			if d, ok := c.Deadline(); !ok || !d.Equal(tt.deadline) {
				t.Fatalf("Deadline() = %v, %v", d, ok)
			}
			var done <-chan struct{}
			var child context.Context
			var afterRan chan struct{}
			if !tt.doneLate {
				if tt.deadline.After(time.Now()) && c.Err() != nil {
					t.Fatalf("Err() = %v before the end", c.Err())
				}
				done = c.Done()
				var stop context.CancelFunc
				child, stop = context.WithTimeout(c, time.Hour)
				defer stop()
				afterRan = make(chan struct{})
				context.AfterFunc(c, func() { close(afterRan) })
				var wasStopped sync.WaitGroup // Wait: stop has returned
				wasStopped.Add(1)
				var stopped bool
				stopAfter := context.AfterFunc(c, func() {
					wasStopped.Wait()
					if stopped {
						t.Error("a stopped AfterFunc ran")
					}
				})
				stopped = stopAfter()
				wasStopped.Done()
				if !stopped && c.Err() == nil {
					t.Fatal("stop of a pending AfterFunc returned false")
				}
			}
			tt.end(c, parentCancel)
			if tt.doneLate {
				done = c.Done()
			}
			if !closedWithin(done, 10*time.Second) {
				t.Fatal("Done not closed")
			}
			if err := c.Err(); !errors.Is(err, tt.want) {
				t.Fatalf("Err() = %v, want %v", err, tt.want)
			}
			if child != nil {
				if !closedWithin(child.Done(), 10*time.Second) || !errors.Is(child.Err(), tt.want) {
					t.Fatalf("derived context: Err() = %v", child.Err())
				}
				if !closedWithin(afterRan, 10*time.Second) {
					t.Fatal("AfterFunc did not run")
				}
			}
			// Registered after the end: runs at once.
			ran := make(chan struct{})
			context.AfterFunc(c, func() { close(ran) })
			if !closedWithin(ran, 10*time.Second) {
				t.Fatal("AfterFunc after the end did not run")
			}
		})
	}
}

func bg() (context.Context, context.CancelFunc) {
	return context.WithValue(context.Background(), ctxKey{}, "v"), func() {}
}

func cancellable() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
}

// TestInvocationContextValues: one value answers the runtime's own keys,
// aws-lambda-go's LambdaContext and trace ID keys, and the parent's.
func TestInvocationContextValues(t *testing.T) {
	for _, parent := range []func() (context.Context, context.CancelFunc){bg, cancellable} {
		p, cancel := parent()
		c := testCtx(p, time.Now().Add(time.Hour))
		lc, ok := lambdacontext.FromContext(c)
		if !ok || lc.AwsRequestID != "req-1" || lc.TenantID != "t" {
			t.Fatalf("LambdaContext = %+v, %v", lc, ok)
		}
		if c.Value(traceIDKey) != "Root=1-a" || c.Value(ctxKey{}) != "v" || c.Value(struct{}{}) != nil {
			t.Fatal("values wrong")
		}
		if RequestID(c) != "req-1" || TraceID(c) != "Root=1-a" || TenantID(c) != "t" {
			t.Fatal("IDs wrong")
		}
		// Derived contexts still find it.
		d, stop := context.WithCancel(c)
		if RequestID(d) != "req-1" {
			t.Fatal("RequestID lost in a derived context")
		}
		stop()
		c.cancel()
		cancel()
	}
}

// TestInvocationContextConcurrent: Done, Err, derived contexts and the end
// from several goroutines at once (for -race).
func TestInvocationContextConcurrent(t *testing.T) {
	c := testCtx(context.Background(), time.Now().Add(5*time.Millisecond))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			child, stop := context.WithCancel(c)
			defer stop()
			<-child.Done()
			_ = c.Err()
		})
	}
	wg.Go(func() { time.Sleep(time.Millisecond); c.cancel() })
	wg.Wait()
	if err := c.Err(); err == nil {
		t.Fatal("Err() nil after the end")
	}
}

// TestInvocationContextAfterFuncOnEnded: an after-function registered once
// the context has ended runs at once, also when its Done channel was made
// before the end (context.WithCancel does Done, then AfterFunc: an end in
// between must not leave the child uncancelled).
func TestInvocationContextAfterFuncOnEnded(t *testing.T) {
	for _, doneFirst := range []bool{true, false} {
		c := testCtx(context.Background(), time.Now().Add(time.Hour))
		if doneFirst {
			_ = c.Done()
		}
		c.cancel()
		ran := make(chan struct{})
		c.AfterFunc(func() { close(ran) })
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatalf("Done made before the end: %v; the after-function registered after the end never ran", doneFirst)
		}
	}
}
