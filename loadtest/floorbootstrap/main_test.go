package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// startFloor runs n slots against a new fake Runtime API. A refusal ends
// its slot's goroutine instead of the process and is sent on the channel.
func startFloor(t *testing.T, n int) (*rapitest.Server, <-chan string) {
	t.Helper()
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan string, n)
	old := exit
	exit = func(_ int, format string, args ...any) {
		refused <- fmt.Sprintf(format, args...)
		runtime.Goexit()
	}
	next := []byte("GET " + pathPrefix + "next HTTP/1.1\r\nHost: " + api.Addr() + "\r\n\r\n")
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { newSlot(api.Addr(), next).run() })
	}
	t.Cleanup(func() {
		_ = api.Close() // the slots' next dial fails: each ends
		wg.Wait()
		exit = old
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatal(err)
	}
	return api, refused
}

func TestAnswersAsTheDemo(t *testing.T) {
	api, _ := startFloor(t, 4)
	tests := []struct {
		name    string
		payload string
		ev      demo.Event
	}{
		{"tiny", `{}`, demo.Event{}},
		{"size 2", `{"size":2}`, demo.Event{Size: 2}},
		{"size 1KiB", `{"size":1024}`, demo.Event{Size: 1 << 10}},
		{"size 1MiB", `{"size":1048576}`, demo.Event{Size: 1 << 20}},
		{"size 6MiB", `{"size":6291456}`, demo.Event{Size: 6 << 20}},
		{"wait 5ms", `{"sleep_ms":5}`, demo.Event{SleepMS: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 3 { // the second answer comes from the cache
				r, err := api.Invoke(t.Context(), rapitest.Request{Payload: []byte(tt.payload)})
				if err != nil || r.Err != nil {
					t.Fatalf("invoke: %v, %v", err, r.Err)
				}
				ctx := lambdacontext.NewContext(t.Context(), &lambdacontext.LambdaContext{AwsRequestID: r.RequestID})
				want, err := demo.Handle(ctx, tt.ev)
				if err != nil {
					t.Fatal(err)
				}
				if string(r.Body) != string(want) {
					t.Fatalf("answer %.80q (%d bytes), the demo's %.80q (%d bytes)", r.Body, len(r.Body), want, len(want))
				}
				if wait := time.Duration(tt.ev.SleepMS) * time.Millisecond; r.Latency < wait {
					t.Fatalf("answered after %v, before its wait of %v", r.Latency, wait)
				}
			}
		})
	}
	st := api.Stats()
	if st.NoEcho > 0 || st.CrossWired > 0 || st.NewConns != 4 {
		t.Fatalf("stats: %d without echo, %d cross-wired, %d connections (want 4)", st.NoEcho, st.CrossWired, st.NewConns)
	}
}

func TestTinyEscapesTheRequestID(t *testing.T) {
	for _, id := range []string{"a-1", `a"b`, "a<b>&c", "é"} {
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: id})
		want, _ := demo.Handle(ctx, demo.Event{})
		if got := appendTiny(nil, []byte(id)); string(got) != string(want) {
			t.Errorf("id %q: %s, the demo's %s", id, got, want)
		}
	}
}

func TestRefusesOtherWorkloads(t *testing.T) {
	tests := []string{`{"stack_kib":32}`, `{"sleep_ms":5,"size":64}`, `{"sleep_ms":-1}`, `{"size":64,"gather":2}`, `{"size":1}`, `{"fail":"x"}`}
	for _, payload := range tests {
		t.Run(payload, func(t *testing.T) {
			api, refused := startFloor(t, 1)
			// Never answered: the invoke ends with the test.
			go func() { _, _ = api.Invoke(t.Context(), rapitest.Request{Payload: []byte(payload)}) }()
			select {
			case msg := <-refused:
				if !strings.Contains(msg, "the floor serves tiny") {
					t.Fatalf("refusal %q does not say what the floor serves", msg)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("not refused")
			}
		})
	}
}

func TestConcurrency(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{{"", 1}, {"x", 1}, {"0", 1}, {"1", 1}, {"64", 64}, {"1600", 1600}, {"1601", 1}}
	for _, tt := range tests {
		if got := concurrency(tt.in); got != tt.want {
			t.Errorf("concurrency(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
