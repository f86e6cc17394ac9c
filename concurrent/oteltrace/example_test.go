package oteltrace_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/oteltrace"
	"github.com/lmigo/lmigo/rapi/rapitest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A handler traced with a BatchSpanProcessor, served by lmigo at N=4
// against the fake Runtime API: its span joins the invocation's trace.
// In a bootstrap, Run's context ends at SIGTERM, and Shutdown follows.
func ExampleWrap() {
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: 4, Queue: true})
	if err != nil {
		panic(err)
	}
	defer api.Close()
	env := api.Env(map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "shout", "AWS_LAMBDA_LOG_LEVEL": "ERROR"})

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	shout := func(_ context.Context, name string) (string, error) {
		return strings.ToUpper(name) + "!", nil
	}
	h := oteltrace.Wrap(shout, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(env))
	rt, err := concurrent.New(h, concurrent.WithLookupEnv(env))
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	res, err := api.Invoke(context.Background(), rapitest.Request{
		Payload: []byte(`"ada"`),
		TraceID: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
	})
	if err != nil {
		panic(err)
	}
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	_ = tp.ForceFlush(context.Background()) // to read the exporter, which Shutdown clears
	fmt.Println(string(res.Body), res.ContentType)
	s := exp.GetSpans()[0]
	fmt.Println(s.Name, s.SpanKind)
	fmt.Println("trace", s.SpanContext.TraceID())
	fmt.Println("parent", s.Parent.SpanID())
	if err := h.Shutdown(context.Background()); err != nil { // at SIGTERM
		panic(err)
	}
	// Output:
	// "ADA!" application/json
	// shout server
	// trace 5759e988bd862e3fe1be46a994272793
	// parent 53995c3f42cd8ad8
}
