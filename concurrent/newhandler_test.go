package concurrent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/concurrent"
)

type echoEvent struct {
	N int    `json:"n"`
	S string `json:"s"`
}

// TestNewHandlerInvoke: each handler form answers what aws-lambda-go's
// lambda.NewHandler answers for it.
func TestNewHandlerInvoke(t *testing.T) {
	tests := []struct {
		name    string
		handler any
		payload string
	}{
		{"typed", func(_ context.Context, e echoEvent) (echoEvent, error) { e.N++; return e, nil }, `{"n":1,"s":"<a&b>"}`},
		{"no event, no result", func(context.Context) error { return nil }, `{}`},
		{"raw message", func(m json.RawMessage) (json.RawMessage, error) { return m, nil }, ` {"a": [1, 2]} `},
		{"string reader", func() (io.Reader, error) { return strings.NewReader("not json"), nil }, `{}`},
		{"bytes", func() ([]byte, error) { return []byte("bin"), nil }, `{}`},
		{"lambda.Handler", lambda.NewHandler(func(e echoEvent) (int, error) { return e.N * 2, nil }), `{"n":21}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := concurrent.NewHandler(tt.handler)
			got, err := h.Invoke(t.Context(), []byte(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			want, err := lambda.NewHandler(tt.handler).Invoke(t.Context(), []byte(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Invoke = %q, aws-lambda-go %q", got, want)
			}
		})
	}
}

// closeCounter has no exported field: it encodes as {}, so it is streamed.
type closeCounter struct {
	r      io.Reader
	closed int
}

func (c *closeCounter) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *closeCounter) Close() error               { c.closed++; return nil }

// TestNewHandlerStream: an io.Reader result is read whole and closed, as
// aws-lambda-go's Invoke returns it.
func TestNewHandlerStream(t *testing.T) {
	body := strings.Repeat("chunk ", 20000) // more than one read
	r := &closeCounter{r: strings.NewReader(body)}
	h := concurrent.NewHandler(func() (io.Reader, error) { return r, nil })
	got, err := h.Invoke(t.Context(), nil)
	if err != nil || string(got) != body || r.closed != 1 {
		t.Errorf("Invoke: %d bytes, %v, closed %d times; want %d bytes, closed once", len(got), err, r.closed, len(body))
	}
}

var errHandler = errors.New("handler failed")

type readPanics struct{}

func (readPanics) Read([]byte) (int, error) { panic("read") }

// TestNewHandlerErrors: a handler error comes back as it is, a panic (in
// the handler or in its reader) as a *PanicError, and no bytes with either.
func TestNewHandlerErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler any
		panics  any // the panic value; nil for a handler error
	}{
		{"error", func() error { return fmt.Errorf("wrapped: %w", errHandler) }, nil},
		{"typed error", func(echoEvent) (echoEvent, error) { return echoEvent{}, errHandler }, nil},
		{"panic", func() (string, error) { panic("boom") }, "boom"},
		{"panic with an error", func(context.Context) { panic(errHandler) }, errHandler},
		{"panic in Read", func() (io.Reader, error) { return readPanics{}, nil }, "read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := concurrent.NewHandler(tt.handler)
			b, err := h.Invoke(t.Context(), []byte(`{}`))
			if b != nil {
				t.Errorf("Invoke returned %q with its error", b)
			}
			var pe *concurrent.PanicError
			switch {
			case tt.panics == nil && (!errors.Is(err, errHandler) || errors.As(err, &pe)):
				t.Errorf("Invoke: %v, want the handler's error", err)
			case tt.panics != nil && (!errors.As(err, &pe) || pe.Value != tt.panics):
				t.Errorf("Invoke: %v, want a *PanicError of %v", err, tt.panics)
			}
		})
	}
	// A bad event is the decoder's error, as in aws-lambda-go.
	f := func(echoEvent) error { return nil }
	h := concurrent.NewHandler(f)
	_, err := h.Invoke(t.Context(), []byte(`{"n":`))
	_, want := lambda.NewHandler(f).Invoke(t.Context(), []byte(`{"n":`))
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("truncated event: %v, aws-lambda-go %v", err, want)
	}
}

// TestNewHandlerRefuses: a handler of no accepted form and an unknown
// codec fail NewHandler, not the first Invoke.
func TestNewHandlerRefuses(t *testing.T) {
	tests := []struct {
		name    string
		handler any
		opts    []concurrent.Option
		want    error
	}{
		{"nil", nil, nil, concurrent.ErrInvalidHandler},
		{"not a func", 42, nil, concurrent.ErrInvalidHandler},
		{"three arguments", func(context.Context, int, int) error { return nil }, nil, concurrent.ErrInvalidHandler},
		{"codec not linked", func() error { return nil }, []concurrent.Option{concurrent.WithCodec("nosuch")}, concurrent.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := concurrent.NewHandler(tt.handler, tt.opts...)
			if _, err := h.Invoke(t.Context(), []byte(`{}`)); !errors.Is(err, tt.want) {
				t.Errorf("Invoke: %v; want %v", err, tt.want)
			}
			// New refuses it at once, with the same error.
			if _, err := concurrent.New(h, concurrent.WithLookupEnv(func(k string) (string, bool) {
				return "127.0.0.1:9", k == "AWS_LAMBDA_RUNTIME_API"
			})); !errors.Is(err, tt.want) {
				t.Errorf("New: %v; want %v", err, tt.want)
			}
		})
	}
}

// TestNewHandlerOptions: the JSON options apply, the Runtime's are
// ignored: the environment is not read and the context is Invoke's.
func TestNewHandlerOptions(t *testing.T) {
	type key struct{}
	h := concurrent.NewHandler(func(ctx context.Context, v any) (any, error) {
		return map[string]any{"v": v, "ctx": ctx.Value(key{}) != nil, "html": "<>"}, nil
	},
		concurrent.WithUseNumber(true), concurrent.WithSetEscapeHTML(true), concurrent.WithSetIndent("", " "),
		concurrent.WithContextValue(key{}, 1),
		concurrent.WithLookupEnv(func(k string) (string, bool) { return "nosuch", k == "LMIGO_JSON_CODEC" }))
	got, err := h.Invoke(t.Context(), []byte(`12345678901234567890`))
	want := "{\n \"ctx\": false,\n \"html\": \"\\u003c\\u003e\",\n \"v\": 12345678901234567890\n}\n"
	if err != nil || string(got) != want {
		t.Errorf("Invoke = %q, %v; want %q", got, err, want)
	}
}

// TestNewHandlerConcurrent: many Invoke calls at once, each with its own
// payload, each get their own answer, intact after the others have run
// (aws-lambda-go's pooled bytes would be overwritten here). Run with -race.
func TestNewHandlerConcurrent(t *testing.T) {
	forms := map[string]any{
		"typed": func(_ context.Context, e echoEvent) (echoEvent, error) { return e, nil },
		"raw message": func(m json.RawMessage) (json.RawMessage, error) {
			return m, nil
		},
		"raw": concurrent.RawHandler(func(_ context.Context, p []byte, out *concurrent.Buffer) error {
			_, err := out.Write(p)
			return err
		}),
		"reader": func(e echoEvent) (io.Reader, error) {
			b, err := json.Marshal(e)
			return bytes.NewReader(b), err
		},
	}
	const goroutines, calls = 32, 50
	for name, f := range forms {
		t.Run(name, func(t *testing.T) {
			h := concurrent.NewHandler(f)
			var wg sync.WaitGroup
			results := make([][][]byte, goroutines)
			for g := range goroutines {
				wg.Go(func() {
					for i := range calls {
						// Payload sizes differ so that pooled buffers are
						// shared between answers of different lengths.
						p, _ := json.Marshal(echoEvent{N: g*calls + i, S: strings.Repeat("x", (g*7+i)%300)})
						b, err := h.Invoke(t.Context(), p)
						if err != nil {
							t.Error(err)
							return
						}
						results[g] = append(results[g], b)
					}
				})
			}
			wg.Wait()
			// Only now, once every call has returned, are the answers read.
			for g, rs := range results {
				for i, b := range rs {
					var e echoEvent
					if err := json.Unmarshal(b, &e); err != nil || e.N != g*calls+i || len(e.S) != (g*7+i)%300 {
						t.Fatalf("answer %d of goroutine %d corrupted: %q", i, g, b)
					}
				}
			}
		})
	}
}

// NewHandler in a test: the handler invoked as Lambda would, without a
// Runtime API.
func ExampleNewHandler() {
	h := concurrent.NewHandler(func(_ context.Context, o order) (receipt, error) {
		return receipt{OrderID: o.ID}, nil
	})
	b, err := h.Invoke(context.Background(), []byte(`{"id":"o-1","items":2}`))
	fmt.Println(string(b), err)
	// Output: {"orderId":"o-1","requestId":""} <nil>
}

// invokeBound is what NewHandler's Invoke reads of a reader at most: the
// default LMIGO_MAX_RESPONSE_BYTES, the platform's bound on a buffered
// answer.
const invokeBound = 6 << 20

// endlessCounter is a reader that never ends, as far as a bounded reader
// is concerned: it gives stop bytes (several bounds, so that an unbounded
// Invoke fails this test without exhausting memory) and then an error.
// read counts what it gave; with writerTo it writes itself out instead,
// 64 KiB a Write, until a Write fails.
type endlessCounter struct {
	read, stop int64
	closed     int
}

var errEndlessStopped = errors.New("the endless reader was read past the test's stop")

func (e *endlessCounter) Read(p []byte) (int, error) {
	if e.read >= e.stop {
		return 0, errEndlessStopped
	}
	n := min(int64(len(p)), e.stop-e.read)
	for i := range p[:n] {
		p[i] = 'x'
	}
	e.read += n
	return int(n), nil
}

func (e *endlessCounter) Close() error { e.closed++; return nil }

type endlessWriterTo struct{ *endlessCounter }

// plainReader reads r; it encodes as {}, so it is sent as its bytes.
type plainReader struct{ r io.Reader }

func (p plainReader) Read(b []byte) (int, error) { return p.r.Read(b) }

func (e endlessWriterTo) WriteTo(w io.Writer) (int64, error) {
	chunk := bytes.Repeat([]byte("y"), 64<<10)
	var n int64
	for e.read < e.stop {
		e.read += int64(len(chunk))
		k, err := w.Write(chunk)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, errEndlessStopped
}

// TestNewHandlerBoundsReader: Invoke reads a reader result that does not
// end at most up to its bound and one chunk, then fails with
// ErrResponseTooLarge and closes it; memory does not grow with the reader.
// A reader of exactly the bound is read whole.
func TestNewHandlerBoundsReader(t *testing.T) {
	const chunk = 64 << 10
	tests := []struct {
		name     string
		reader   func(c *endlessCounter) io.Reader
		stop     int64
		wantLen  int
		overflow bool
	}{
		{"reader", func(c *endlessCounter) io.Reader { return c }, 4 * invokeBound, 0, true},
		{"writer to", func(c *endlessCounter) io.Reader { return endlessWriterTo{c} }, 4 * invokeBound, 0, true},
		{"reader at the bound", func(c *endlessCounter) io.Reader { return plainReader{io.LimitReader(c, invokeBound)} }, invokeBound, invokeBound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &endlessCounter{stop: tt.stop}
			r := tt.reader(c)
			h := concurrent.NewHandler(func() (io.Reader, error) { return r, nil })
			b, err := h.Invoke(t.Context(), nil)
			if c.read > invokeBound+chunk {
				t.Errorf("Invoke read %d bytes of the reader, more than the bound %d and a chunk", c.read, invokeBound)
			}
			if !tt.overflow {
				if err != nil || len(b) != tt.wantLen {
					t.Errorf("Invoke: %d bytes, %v; want %d bytes", len(b), err, tt.wantLen)
				}
				return
			}
			if !errors.Is(err, concurrent.ErrResponseTooLarge) || b != nil {
				t.Errorf("Invoke: %d bytes, %v; want no bytes and ErrResponseTooLarge", len(b), err)
			}
			if c.closed != 1 {
				t.Errorf("the reader was closed %d times, want once", c.closed)
			}
		})
	}
}
