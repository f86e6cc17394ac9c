package load

import (
	"context"
	"time"
)

// Invoker is the seam between the load models and a target: one call is
// one synchronous invocation. A function error and a throttle are answers
// (in Outcome, with a nil error); an error means no answer came. Invoke is
// called concurrently.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) (Outcome, error)
}

// Outcome is the answer to one invocation.
type Outcome struct {
	Body          []byte // the response, or the error document when FunctionError is set
	FunctionError string // error type; "" on success
	Throttled     bool   // refused because no /next was pending (Runtime.Unavailable, 429)
	// Latency is the target's own measure: for the fake API from hand-out
	// on /next until the response was read in full (the runtime's share),
	// for the emulator and Lambda the round trip of the invoke request.
	Latency time.Duration
}

// readyWaiter is an Invoker that can wait until a retry of a throttled
// invocation can succeed.
type readyWaiter interface {
	WaitReady(ctx context.Context)
}
