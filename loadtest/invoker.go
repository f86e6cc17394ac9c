package main

import (
	"context"
	"errors"
	"time"

	"github.com/lmigo/lmigo/loadtest/lambdainvoke"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// invoker is the seam between the load models and a target: one call is
// one synchronous invocation. A function error and a throttle are answers
// (in outcome, with a nil error); an error means no answer came. Invoke is
// called concurrently.
type invoker interface {
	Invoke(ctx context.Context, payload []byte) (outcome, error)
}

// outcome is the answer to one invocation.
type outcome struct {
	Body          []byte // the response, or the error document when FunctionError is set
	FunctionError string // error type; "" on success
	Throttled     bool   // refused because no /next was pending (Runtime.Unavailable, 429)
	// Latency is the target's own measure: for the fake API from hand-out
	// on /next until the response was read in full (the runtime's share),
	// for the emulator and Lambda the round trip of the invoke request.
	Latency time.Duration
}

// fakeInvoker invokes through the fake Runtime API, in this process.
type fakeInvoker struct{ api *rapitest.Server }

func (f fakeInvoker) Invoke(ctx context.Context, payload []byte) (outcome, error) {
	r, err := f.api.Invoke(ctx, rapitest.Request{Payload: payload})
	switch {
	case errors.Is(err, rapitest.ErrThrottled):
		return outcome{Throttled: true}, nil
	case err != nil:
		return outcome{}, err
	case r.Err != nil:
		return outcome{Body: r.Err.Body, FunctionError: r.Err.Type, Latency: r.Latency}, nil
	}
	return outcome{Body: r.Body, Latency: r.Latency}, nil
}

// readyWaiter is an invoker that can wait until a retry of a throttled
// invocation can succeed.
type readyWaiter interface {
	waitReady(ctx context.Context)
}

// waitReady returns once a /next is pending, or after 20 ms at most, or
// when ctx ends. The fake API's WaitPoll wakes one waiter per new /next
// and passes the wake on while more are pending, so several throttled
// callers each go as soon as there is a /next for them; the bound is only
// a safety net. (A 1 ms bound, needed before WaitPoll passed wakes on,
// sent callers back blindly: each such retry without a /next pending was
// one more throttle and a timer that woke the netpoller, the driver's CPU.)
func (f fakeInvoker) waitReady(ctx context.Context) {
	_ = f.api.WaitPoll(ctx, 20*time.Millisecond)
}

// rieInvoker invokes the emulator's invoke endpoint directly.
type rieInvoker struct{ e *rie.Emulator }

func (r rieInvoker) Invoke(ctx context.Context, payload []byte) (outcome, error) {
	res, err := r.e.Invoke(ctx, payload)
	switch {
	case err != nil:
		return outcome{}, err
	case res.Throttled:
		return outcome{Throttled: true}, nil
	}
	return outcome{Body: res.Body, FunctionError: res.FunctionError, Latency: res.Latency}, nil
}

// sdkInvoker invokes through aws-sdk-go-v2's Lambda Invoke: a deployed
// function, or the emulator with -sdk.
type sdkInvoker struct{ inv *lambdainvoke.Invoker }

func (s sdkInvoker) Invoke(ctx context.Context, payload []byte) (outcome, error) {
	res, err := s.inv.Invoke(ctx, payload)
	switch {
	case err != nil:
		return outcome{}, err
	case res.Throttled:
		return outcome{Throttled: true}, nil
	}
	return outcome{Body: res.Body, FunctionError: res.FunctionError, Latency: res.Latency}, nil
}
