package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/concurrent/metrics"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// TestServeEndsInvocationOnce: on every way an invocation ends (a value,
// an error, a panic, runtime.Goexit in the handler, a stream, runtime.Goexit
// in the stream's reader, an answer too large) its metrics are written once
// (finish) and its context is ended (cancel) before the slot serves the
// next one.
func TestServeEndsInvocationOnce(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	out := &syncBuffer{}
	var (
		mu   sync.Mutex
		ctxs = map[string]context.Context{}
	)
	handler := func(ctx context.Context, ev struct{ Mode string }) (any, error) {
		mu.Lock()
		ctxs[ev.Mode] = ctx
		mu.Unlock()
		if err := metrics.Add(ctx, "Ended"+ev.Mode, metrics.Count, 1); err != nil {
			return nil, err
		}
		switch ev.Mode {
		case "error":
			return nil, errors.New("failed")
		case "panic":
			panic("broke")
		case "goexit":
			runtime.Goexit()
		case "stream":
			return &stReader{pieces: []string{"streamed"}}, nil
		case "readgoexit":
			return &stReader{pieces: []string{"a", "!goexit"}}, nil
		case "large":
			return strings.Repeat("x", 2048), nil
		}
		return "fine", nil
	}
	serve(t, api, env{"LMIGO_MAX_RESPONSE_BYTES": "1KiB", "POWERTOOLS_METRICS_NAMESPACE": "test"}, handler, withStdout(out))
	modes := []struct{ mode, errType string }{
		{"value", ""},
		{"error", "errorString"},
		{"panic", "string"},
		{"goexit", "Runtime.HandlerExited"},
		{"stream", ""},
		{"readgoexit", ""}, // cut after its first byte: the stream is truncated
		{"large", "Function.ResponseSizeTooLarge"},
		{"last", ""},
	}
	for _, m := range modes {
		r := invoke(t, api, `{"Mode":"`+m.mode+`"}`)
		if m.errType != "" && (r.Err == nil || r.Err.Type != m.errType) {
			t.Errorf("%s: got %s %+v, want an error of type %s", m.mode, r.Body, r.Err, m.errType)
		}
	}
	// One slot: "last" was served after every other invocation had ended.
	stdout := out.String()
	mu.Lock()
	defer mu.Unlock()
	for _, m := range modes[:len(modes)-1] {
		if n := strings.Count(stdout, `"Ended`+m.mode+`"`); n != 2 { // the directive and the value
			t.Errorf("%s: metric named %d times in stdout, want 2 (one document):\n%s", m.mode, n, stdout)
		}
		if ctx := ctxs[m.mode]; ctx == nil || ctx.Err() == nil {
			t.Errorf("%s: context not ended before the next invocation", m.mode)
		}
	}
}

// benchSizes are the body sizes of the request and response benchmarks.
var benchSizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}, {"6MiB", 6 << 20}}

// BenchmarkResponse: one invocation's response path in the process, per
// handler form and size, from the handler's return to the bytes ready for
// the socket (the write to it is the same for all: writev from where the
// bytes lie). The slot's buffer is reused, as under a retain cap above the
// size. The handlers return cached bodies, as the load test's does, so
// B/op and ns/op are the runtime's. The copies per path are in the
// package doc: 0 for json.RawMessage, raw and io.WriterTo, 1 for typed,
// []byte and lambda.Handler.
func BenchmarkResponse(b *testing.B) {
	for _, sz := range benchSizes {
		body := []byte(`"` + strings.Repeat("x", sz.n-2) + `"`)
		str := string(body[1 : len(body)-1])
		raw := bytes.Repeat([]byte{0xfb}, (sz.n-2)/4*3) // base64: about n bytes
		forms := []struct {
			name    string
			handler any
		}{
			{"typed", func(context.Context, struct{}) (string, error) { return str, nil }},
			{"rawmessage", func(context.Context, json.RawMessage) (json.RawMessage, error) { return body, nil }},
			{"bytes", func(context.Context, struct{}) ([]byte, error) { return raw, nil }},
			{"reader", func(context.Context, struct{}) (io.Reader, error) { return bytes.NewReader(body), nil }},
			{"raw", RawHandler(func(_ context.Context, _ []byte, out *Buffer) error {
				out.B = append(out.B, body...)
				return nil
			})},
			{"invoker", invokerFunc(func(context.Context, []byte) ([]byte, error) { return body, nil })},
		}
		for _, f := range forms {
			b.Run(fmt.Sprintf("%s/%s", f.name, sz.name), func(b *testing.B) {
				h, err := newHandler(f.handler, handlerConfig{})
				if err != nil {
					b.Fatal(err)
				}
				ctx := benchContext(b)
				out := new(Buffer)
				payload := []byte(`{}`)
				b.ReportAllocs()
				b.SetBytes(int64(sz.n))
				for b.Loop() {
					out.Reset()
					_, rd, direct, err := h.run(ctx, payload, out)
					switch {
					case err != nil:
						b.Fatal(err)
					case rd != nil: // streamed: it writes itself out
						if _, err := rd.(io.WriterTo).WriteTo(io.Discard); err != nil {
							b.Fatal(err)
						}
					case direct == nil && len(out.B) == 0:
						b.Fatal("no response")
					}
				}
			})
		}
	}
}

// BenchmarkRequest: one invocation's request path after the read, per
// handler form and payload size: the decoding from the slot's buffer (a
// typed event by json.Unmarshal over it, a json.RawMessage event copied, a
// raw handler's payload as it is). The response is small.
func BenchmarkRequest(b *testing.B) {
	type event struct {
		Data string `json:"data"`
	}
	for _, sz := range benchSizes {
		payload := []byte(`{"data":"` + strings.Repeat("x", sz.n-11) + `"}`)
		forms := []struct {
			name    string
			handler any
		}{
			{"typed", func(_ context.Context, ev event) (int, error) { return len(ev.Data), nil }},
			{"rawmessage", func(_ context.Context, ev json.RawMessage) (int, error) { return len(ev), nil }},
			{"raw", RawHandler(func(_ context.Context, p []byte, out *Buffer) error {
				out.B = append(out.B, '1')
				_ = p
				return nil
			})},
		}
		for _, f := range forms {
			b.Run(fmt.Sprintf("%s/%s", f.name, sz.name), func(b *testing.B) {
				h, err := newHandler(f.handler, handlerConfig{})
				if err != nil {
					b.Fatal(err)
				}
				ctx := benchContext(b)
				out := new(Buffer)
				b.ReportAllocs()
				b.SetBytes(int64(len(payload)))
				for b.Loop() {
					out.Reset()
					if _, _, _, err := h.run(ctx, payload, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
