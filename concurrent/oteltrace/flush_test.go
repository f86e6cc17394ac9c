package oteltrace_test

import (
	"context"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/oteltrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestFlushEvery: with a batch timeout of an hour, spans are exported by
// the background flush alone, and Shutdown exports the rest.
func TestFlushEvery(t *testing.T) {
	exp := &slowExporter{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Hour)))
	h := oteltrace.Wrap(func(context.Context) error { return nil },
		oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup), oteltrace.WithFlushEvery(time.Millisecond))
	for i := 0; i < 1000 && exp.spans.Load() == 0; i++ { // bounded: about 2 s at most
		if _, err := h.Invoke(context.Background(), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if exp.spans.Load() == 0 {
		t.Error("no span exported by the background flush")
	}
	if _, err := h.Invoke(context.Background(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := exp.spans.Load(), int64(0); got == want {
		t.Error("no span after Shutdown")
	}
	// After Shutdown the provider drops spans, and Invoke still answers.
	if _, err := h.Invoke(context.Background(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
}

// TestFlushDefaultByEnvironment: a flush per invocation where Lambda
// freezes the environment, none under LMI.
func TestFlushDefaultByEnvironment(t *testing.T) {
	for _, tt := range []struct {
		initType string
		flushed  bool
	}{
		{"on-demand", true},
		{"lambda-managed-instances", false},
		{"", false},
	} {
		exp := &slowExporter{}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Hour)))
		env := func(k string) (string, bool) {
			if k == "AWS_LAMBDA_INITIALIZATION_TYPE" {
				return tt.initType, tt.initType != ""
			}
			return "", false
		}
		h := oteltrace.Wrap(func(context.Context) error { return nil }, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(env))
		if _, err := h.Invoke(context.Background(), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if got := exp.spans.Load() == 1; got != tt.flushed {
			t.Errorf("%q: exported before Invoke returned: %v, want %v", tt.initType, got, tt.flushed)
		}
		if err := h.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
