// Command traced serves six invocations on one slot against the fake
// Runtime API, for way to trace (see ../main.go). Its argument "raw"
// serves them with a raw handler, anything else with a typed one.
//
// way copies this file into a copy of the tree and builds it there, so it
// uses only what every traced tree has.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

type in struct {
	ID string `json:"id"`
}

type out struct {
	ID string `json:"id"`
}

// roundMark is traced: it marks in the trace where each invocation begins.
//
//go:noinline
func roundMark(i int) { _ = i }

func main() {
	srv, err := rapitest.New(rapitest.Options{})
	if err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		"AWS_LAMBDA_RUNTIME_API": srv.Addr(),
		"LMIGO_SLOTS":            "1",
		"LMIGO_METRICS":          "off",
	} {
		if err := os.Setenv(k, v); err != nil {
			panic(err)
		}
	}
	var h any = func(_ context.Context, v in) (out, error) { return out(v), nil }
	if len(os.Args) > 1 && os.Args[1] == "raw" {
		h = concurrent.RawHandler(func(_ context.Context, p []byte, o *concurrent.Buffer) error {
			o.B = append(o.B, p...)
			return nil
		})
	}
	rt, err := concurrent.New(h)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	for i := range 6 {
		roundMark(i)
		// Traced, an invocation takes seconds; the bound only ends a hung run.
		ictx, c := context.WithTimeout(context.Background(), 15*time.Minute)
		if err := srv.WaitPolls(ictx, 1); err != nil {
			panic(err)
		}
		if _, err := srv.Invoke(ictx, rapitest.Request{Payload: []byte(`{"id":"a"}`), Timeout: 10 * time.Minute}); err != nil {
			panic(err)
		}
		c()
	}
	cancel()
	fmt.Println("run:", <-done)
	srv.Close()
}
