// Package fakelambda runs a handler the way Lambda Managed Instances would,
// for the examples' tests: a concurrent.Runtime with N slots polling the
// project's fake Runtime API (rapi/rapitest) over loopback.
package fakelambda

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap/zaptest"
)

// Serve starts handler in a runtime with AWS_LAMBDA_MAX_CONCURRENCY = n,
// against a new fake Runtime API, and returns the fake once the runtime
// has all its polls outstanding (init is done). Invokes wait for a free
// slot rather than being throttled, so tests may send more than n at once.
// Both stop when the test ends; the runtime's log goes to the test log.
func Serve(tb testing.TB, handler any, n int) *rapitest.Server {
	tb.Helper()
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	lookup := api.Env(map[string]string{
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_NAME":        "example",
		"AWS_LAMBDA_FUNCTION_VERSION":     "1",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048",
		"AWS_REGION":                      "us-east-1",
	})
	rt, err := concurrent.New(handler, concurrent.WithLookupEnv(lookup), concurrent.WithLogger(zaptest.NewLogger(tb)))
	if err != nil {
		_ = api.Close()
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			tb.Error("Run did not return after cancel")
		}
		_ = api.Close()
	})
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := api.WaitPolls(wctx, rt.Config().Slots); err != nil {
		tb.Fatalf("the runtime never polled: %v", err)
	}
	return api
}

// Invoke hands payload to the runtime and returns how the invocation
// ended; it fails the test when the invocation could not be made.
func Invoke(tb testing.TB, api *rapitest.Server, payload []byte) rapitest.Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := api.Invoke(ctx, rapitest.Request{Payload: payload})
	if err != nil {
		tb.Fatalf("invoke: %v", err)
	}
	return r
}

// ReadFile returns a testdata file, failing the test when it cannot.
func ReadFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
