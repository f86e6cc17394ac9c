package concurrent

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// relay is a wrapper that passes on the answer of NewHandler(fn) as
// InvokeStream gives it, and counts the calls of Invoke, which the
// runtime must not make.
type relay struct {
	inner   StreamInvoker
	invokes atomic.Int32
}

func (r *relay) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	r.invokes.Add(1)
	return r.inner.Invoke(ctx, payload)
}

func (r *relay) InvokeStream(ctx context.Context, payload []byte) (string, []byte, io.Reader, error) {
	return r.inner.InvokeStream(ctx, payload)
}

// csvReader is a reader with a content type of its own.
type csvReader struct{ r io.Reader }

func (c csvReader) Read(p []byte) (int, error) { return c.r.Read(p) }
func (csvReader) ContentType() string          { return "text/csv" }

// rawBytes is a lambda.Handler whose bytes are not JSON.
type rawBytes struct{}

func (rawBytes) Invoke(context.Context, []byte) ([]byte, error) { return []byte("\x00raw"), nil }

// TestStreamInvokerServed: the runtime serves a StreamInvoker through
// InvokeStream, never Invoke, and each answer goes out as the wrapped
// handler's goes out served bare: the same mode, content type, bytes and
// error.
func TestStreamInvokerServed(t *testing.T) {
	long := strings.Repeat("0123456789", 10_000)
	tests := []struct {
		name     string
		fn       any
		streamed bool
	}{
		{"reader", func() (io.Reader, error) { return strings.NewReader(long), nil }, true},
		{"reader with a content type", func() (io.Reader, error) { return csvReader{strings.NewReader("a,b\n")}, nil }, true},
		{"typed", func(s string) (string, error) { return s + "!", nil }, false},
		{"lambda.Handler bytes", rawBytes{}, false},
		{"error", func() error { return errors.New("no") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bareAPI := newAPI(t, rapitest.Options{})
			serve(t, bareAPI, env{}, tt.fn)
			want := invoke(t, bareAPI, `"x"`)
			if (want.ResponseMode == rapitest.ResponseModeStreaming) != tt.streamed {
				t.Fatalf("bare: mode %q, want streamed %v", want.ResponseMode, tt.streamed)
			}
			r := &relay{inner: NewHandler(tt.fn).(StreamInvoker)}
			api := newAPI(t, rapitest.Options{})
			serve(t, api, env{}, r)
			got := invoke(t, api, `"x"`)
			if got.ResponseMode != want.ResponseMode || got.ContentType != want.ContentType || string(got.Body) != string(want.Body) {
				t.Errorf("wrapped: mode %q, type %q, %d bytes; bare: mode %q, type %q, %d bytes",
					got.ResponseMode, got.ContentType, len(got.Body), want.ResponseMode, want.ContentType, len(want.Body))
			}
			if (got.Err == nil) != (want.Err == nil) || got.Err != nil && got.Err.Type != want.Err.Type {
				t.Errorf("wrapped: error %+v; bare: %+v", got.Err, want.Err)
			}
			if n := r.invokes.Load(); n != 0 {
				t.Errorf("the runtime called Invoke %d times", n)
			}
		})
	}
}
