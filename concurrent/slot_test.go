package concurrent

import (
	"context"
	"errors"
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
