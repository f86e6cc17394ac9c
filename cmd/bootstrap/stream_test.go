package main

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestStreamingUnderEmulator runs demo.Stream (testdata/stream), whose
// results lmigo streams, under the AWS emulator in LMI mode with N = 4.
//
// What the emulator (version rie.EmulatorModule) does with a stream: it
// reads the whole chunked body (up to 6 MiB + 100 B) and only then answers
// the invoke, with the runtime's Content-Type and
// Lambda-Runtime-Function-Response-Mode: streaming; its 2 MiB/s rate limit
// after a 6 MiB burst is configured but not applied by its buffering
// responder. Error trailers after the first byte make the answer a function
// error like any other: status 200, Error-Type the trailer's type (or
// Runtime.Unknown unless it matches ^(Runtime|Function)\.[A-Z][a-zA-Z]+$),
// the decoded error document as body, and the bytes streamed before it
// dropped.
func TestStreamingUnderEmulator(t *testing.T) {
	const n = 4
	bin := rie.BuildT(t, "./testdata/stream")
	e := rie.StartT(t, rie.Options{Bootstrap: bin, MaxConcurrency: n, Timeout: 15 * time.Second})

	whole := func(t *testing.T, r rie.Result, size int) {
		t.Helper()
		if !r.OK() || !bytes.Equal(r.Body, demo.StreamBody(size)) ||
			r.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			r.Header.Get("Lambda-Runtime-Function-Response-Mode") != "streaming" {
			t.Fatalf("status %d, error %q, header %v, %d bytes (want %d, whole and in order)",
				r.Status, r.FunctionError, r.Header, len(r.Body), size)
		}
	}

	t.Run("whole and in order", func(t *testing.T) {
		// 5 MiB + 7 in odd chunks: over lmigo's 6 MiB buffered cap it would
		// not go, as the emulator's own cap is 6 MiB + 100 B.
		const size = 5<<20 + 7
		whole(t, invokeRetrying(t, e, fmt.Sprintf(`{"stream":%d,"chunk":4999}`, size)), size)
	})

	t.Run("concurrent streams interleave", func(t *testing.T) {
		// Each stream sends a chunk, then waits until all n have sent
		// theirs: they finish only if none waits for another's end.
		const size = 3 * 10000
		var wg sync.WaitGroup
		results := make([]rie.Result, n)
		for i := range n {
			wg.Go(func() {
				results[i] = invokeRetrying(t, e, fmt.Sprintf(`{"stream":%d,"chunk":10000,"meet":%d}`, size, n))
			})
		}
		wg.Wait()
		for _, r := range results {
			whole(t, r, size)
		}
	})

	t.Run("error after the first byte", func(t *testing.T) {
		for _, tt := range []struct{ payload, errorType, doc string }{
			{`{"stream":100000,"chunk":1000,"fail":"source broke","fail_at":5000,"fail_type":"Function.SourceBroke"}`,
				"Function.SourceBroke", `{"errorMessage":"source broke","errorType":"Function.SourceBroke"}`},
			// demo.Error's type, "Error", is not one the emulator passes on.
			{`{"stream":100000,"chunk":1000,"fail":"source broke","fail_at":5000}`,
				"Runtime.Unknown", `{"errorMessage":"source broke","errorType":"Error"}`},
			// Before the first byte it is an ordinary /error: the same answer.
			{`{"stream":100000,"fail":"no source","fail_at":0,"fail_type":"Function.NoSource"}`,
				"Function.NoSource", `{"errorMessage":"no source","errorType":"Function.NoSource"}`},
		} {
			r := invokeRetrying(t, e, tt.payload)
			if r.Status != 200 || r.FunctionError != tt.errorType || string(r.Body) != tt.doc ||
				r.Header.Get("Lambda-Runtime-Function-Response-Mode") != "" {
				t.Errorf("%s: status %d, Error-Type %q, header %v, body %.200q; want 200, %q, %s",
					tt.payload, r.Status, r.FunctionError, r.Header, r.Body, tt.errorType, tt.doc)
			}
		}
	})

	// The same process serves on.
	whole(t, invokeRetrying(t, e, `{"stream":10}`), 10)
	if logs := e.Logs(); bytes.Contains(logs, []byte("Runtime.ExitError")) || !bytes.Contains(logs, []byte("error trailers")) {
		t.Fatalf("the runtime exited, or the emulator saw no trailers:\n%s", logs)
	}
}
