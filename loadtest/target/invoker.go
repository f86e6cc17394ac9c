package target

import (
	"context"
	"errors"
	"time"

	"github.com/lmigo/lmigo/loadtest/lambdainvoke"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// fakeInvoker invokes through the fake Runtime API, in this process.
type fakeInvoker struct{ api *rapitest.Server }

func (f fakeInvoker) Invoke(ctx context.Context, payload []byte) (load.Outcome, error) {
	r, err := f.api.Invoke(ctx, rapitest.Request{Payload: payload})
	switch {
	case errors.Is(err, rapitest.ErrThrottled):
		return load.Outcome{Throttled: true}, nil
	case err != nil:
		return load.Outcome{}, err
	case r.Err != nil:
		return load.Outcome{Body: r.Err.Body, FunctionError: r.Err.Type, Latency: r.Latency}, nil
	}
	return load.Outcome{Body: r.Body, Latency: r.Latency}, nil
}

// WaitReady returns once a /next is pending, or after 20 ms at most, or
// when ctx ends. The fake API's WaitPoll wakes one waiter per new /next
// and passes the wake on while more are pending, so several throttled
// callers each go as soon as there is a /next for them; the bound is only
// a safety net. (A 1 ms bound, needed before WaitPoll passed wakes on,
// sent callers back blindly: each such retry without a /next pending was
// one more throttle and a timer that woke the netpoller, the driver's CPU.)
func (f fakeInvoker) WaitReady(ctx context.Context) {
	_ = f.api.WaitPoll(ctx, 20*time.Millisecond)
}

// rieInvoker invokes the emulator's invoke endpoint directly.
type rieInvoker struct{ e *rie.Emulator }

func (r rieInvoker) Invoke(ctx context.Context, payload []byte) (load.Outcome, error) {
	res, err := r.e.Invoke(ctx, payload)
	switch {
	case err != nil:
		return load.Outcome{}, err
	case res.Throttled:
		return load.Outcome{Throttled: true}, nil
	}
	return load.Outcome{Body: res.Body, FunctionError: res.FunctionError, Latency: res.Latency}, nil
}

// sdkInvoker invokes through aws-sdk-go-v2's Lambda Invoke: a deployed
// function, or the emulator with -sdk.
type sdkInvoker struct{ inv *lambdainvoke.Invoker }

func (s sdkInvoker) Invoke(ctx context.Context, payload []byte) (load.Outcome, error) {
	res, err := s.inv.Invoke(ctx, payload)
	switch {
	case err != nil:
		return load.Outcome{}, err
	case res.Throttled:
		return load.Outcome{Throttled: true}, nil
	}
	return load.Outcome{Body: res.Body, FunctionError: res.FunctionError, Latency: res.Latency}, nil
}
