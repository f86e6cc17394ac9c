package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// copyTestSize is the body of TestResponseCopies: large enough that a copy
// stands out from everything else an invocation allocates.
const copyTestSize = 6 << 20

// TestResponseCopies holds every response path to the copies of its body
// that docs/memory.md's table allows. A buffered body's copies are
// counted as body-sized allocations: with a retain cap far below the body,
// every body-sized buffer the runtime fills is new on every invocation;
// garbage collection is off while counting and GOMAXPROCS is 1, so pooled
// buffers (encoding/json's) are reused, not counted. The fake API
// allocates one body per invocation (rapitest.Result.Body); that one is
// subtracted. A raw handler fills one buffer itself: that is how it writes
// its response, not a copy. A streamed body is copied when the runtime
// reads it into the chunk buffer (Read) and not when the reader writes
// itself out (io.WriterTo).
func TestResponseCopies(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	body := []byte(`"` + strings.Repeat("x", copyTestSize-2) + `"`)
	typedValue := strings.Repeat("y", copyTestSize-2) // encodes to copyTestSize bytes
	rawBytes := bytes.Repeat([]byte{0xfb}, 3<<20)     // base64 in JSON: 4 MiB + 2
	tests := []struct {
		name    string
		handler any
		size    int // of the response
		copies  int // docs/memory.md's table
		written int // buffers the handler fills itself
	}{
		{"json.RawMessage handler", func(context.Context, json.RawMessage) (json.RawMessage, error) { return body, nil }, len(body), 0, 0},
		{"typed, json.RawMessage result", func(context.Context, struct{}) (json.RawMessage, error) { return body, nil }, len(body), 0, 0},
		{"raw handler", RawHandler(func(_ context.Context, _ []byte, out *Buffer) error {
			out.B = append(out.B, body...)
			return nil
		}), len(body), 0, 1},
		{"typed, string result", func(context.Context, struct{}) (string, error) { return typedValue, nil }, len(body), 1, 0},
		{"typed, []byte result", func(context.Context, struct{}) ([]byte, error) { return rawBytes, nil }, 4<<20 + 2, 1, 0},
		{"lambda.Handler", invokerFunc(func(context.Context, []byte) ([]byte, error) { return body, nil }), len(body), 0, 0},
		// NewHandler's lambda.Handler runs as the handler it wraps.
		{"NewHandler of a json.RawMessage handler", NewHandler(func(context.Context, json.RawMessage) (json.RawMessage, error) { return body, nil }), len(body), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buffers := countBuffers(t, tt.handler, `{}`, tt.size, tt.size, "64KiB")
			if got := buffers - tt.written; got != tt.copies {
				t.Fatalf("the body was copied %d times in user space (%d body-sized buffers, %d filled by the handler); docs/memory.md says %d",
					got, buffers, tt.written, tt.copies)
			}
		})
	}
	// At any N: a lambda.Handler's bytes are its own (callInvoker).
	t.Run("lambda.Handler, N=2", func(t *testing.T) {
		h := invokerFunc(func(context.Context, []byte) ([]byte, error) { return body, nil })
		if got := countBuffersAt(t, 2, h, `{}`, len(body), len(body), "64KiB"); got != 0 {
			t.Fatalf("the body was copied %d times in user space; docs/memory.md says 0", got)
		}
	})
}

// TestStreamedResponseCopies: a streamed io.Reader result is copied once
// into the slot's chunk buffer (by Read), as docs/memory.md says, and
// never into a buffer of the body's size.
func TestStreamedResponseCopies(t *testing.T) {
	body := bytes.Repeat([]byte("z"), copyTestSize)
	tests := []struct {
		name   string
		reader func() io.Reader
		copies int
	}{
		{"io.Reader", func() io.Reader { return &readerOnly{r: bytes.NewReader(body)} }, 1},
		{"*bytes.Reader", func() io.Reader { return bytes.NewReader(body) }, 0},
		{"*bytes.Buffer", func() io.Reader { return bytes.NewBuffer(body) }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads atomic.Int64
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(context.Context, struct{}) (io.Reader, error) {
				return &countReads{r: tt.reader(), n: &reads}, nil
			})
			r := invoke(t, api, `{}`)
			if r.Err != nil || !bytes.Equal(r.Body, body) {
				t.Fatalf("got %d bytes, %+v", len(r.Body), r.Err)
			}
			copies := 0
			if reads.Load() > 0 {
				copies = 1
			}
			if copies != tt.copies {
				t.Fatalf("%d Read calls: %d copies into the chunk buffer; docs/memory.md says %d", reads.Load(), copies, tt.copies)
			}
		})
	}
}

// countReads counts Read calls and keeps the reader's io.WriterTo, if it
// has one. Its fields are unexported: it encodes as {}, so it is streamed.
type countReads struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReads) Read(p []byte) (int, error) {
	c.n.Add(1)
	return c.r.Read(p)
}

func (c *countReads) WriteTo(w io.Writer) (int64, error) {
	if wt, ok := c.r.(io.WriterTo); ok {
		return wt.WriteTo(w)
	}
	return io.Copy(w, struct{ io.Reader }{c}) // by Read
}

// readerOnly hides every method but Read.
type readerOnly struct{ r io.Reader }

func (r *readerOnly) Read(p []byte) (int, error) { return r.r.Read(p) }

// invokerFunc is a lambda.Handler.
type invokerFunc func(context.Context, []byte) ([]byte, error)

func (f invokerFunc) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return f(ctx, payload)
}

// TestRetainedBufferReused: under a retain cap that holds a 6 MiB response
// buffer, a raw handler's next 6 MiB response is written into that buffer
// and nothing body-sized is allocated: the slot's buffers each come back
// to the same use (putBuffers).
func TestRetainedBufferReused(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	body := []byte(`"` + strings.Repeat("x", copyTestSize-2) + `"`)
	raw := RawHandler(func(_ context.Context, _ []byte, out *Buffer) error {
		out.B = append(out.B, body...)
		return nil
	})
	if n := countBuffers(t, raw, `{}`, len(body), len(body), "8MiB"); n != 0 {
		t.Fatalf("%d body-sized buffers per invocation with an 8 MiB retain cap, want 0", n)
	}
}

// TestRetainedBuffersKeepTheirUse: a response buffer that fills the
// retain cap is not kept at the expense of the request buffer, which
// would leave the slot lending it to every request after: after a 1 MiB
// response under a 1 MiB cap and a 6 MiB one, the slot keeps only its
// small request buffer.
func TestRetainedBuffersKeepTheirUse(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true, MaxResponseBytes: 8 << 20})
	rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1", "LMIGO_BUFFER_RETAIN_BYTES": "1MiB"},
		RawHandler(func(_ context.Context, p []byte, out *Buffer) error {
			n, _ := strconv.Atoi(string(p))
			out.B = append(out.B, '"')
			out.B = append(out.B, bytes.Repeat([]byte("x"), n-2)...)
			out.B = append(out.B, '"')
			return nil
		}))
	// The last size twice: the first 1 KiB response grows an array of its
	// own (never kept: see handler.callRaw), the second is written into a
	// buffer lent at that size, which the slot then keeps.
	for _, n := range []int{1 << 20, 6 << 20, 1 << 10, 1 << 10} {
		if r := invoke(t, api, strconv.Itoa(n)); r.Err != nil || len(r.Body) != n {
			t.Fatalf("%d: got %d bytes, %+v", n, len(r.Body), r.Err)
		}
	}
	// The slot is put back just after the answer is accepted.
	var kept int
	defer func() {
		if t.Failed() {
			t.Logf("the slot keeps %d bytes of buffer, want its small request buffer only", kept)
		}
	}()
	waitUntil(t, "the slot keeping its small request buffer only", func() bool {
		kept = rt.slots[0].bufs.Retained()
		return kept > 0 && kept < 64<<10
	})
}

// TestRequestCopies: a request payload is read once into the slot's
// buffer and decoded from there, as docs/memory.md says: a raw handler
// gets that buffer, a json.RawMessage event and a lambda.Handler's payload
// are one copy (the handler may keep them), a typed event is decoded by
// json.Unmarshal over the buffer (its one string of the payload's size is
// the decoding). The retain cap keeps the 6 MiB request buffer, so the
// read itself allocates nothing.
func TestRequestCopies(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	payload := `{"data":"` + strings.Repeat("x", copyTestSize-11) + `"}`
	type event struct {
		Data string `json:"data"`
	}
	tests := []struct {
		name    string
		handler any
		copies  int
	}{
		{"raw handler", RawHandler(func(_ context.Context, p []byte, out *Buffer) error {
			out.B = strconv.AppendInt(out.B, int64(len(p)), 10)
			return nil
		}), 0},
		{"lambda.Handler", invokerFunc(func(_ context.Context, p []byte) ([]byte, error) {
			return strconv.AppendInt(nil, int64(len(p)), 10), nil
		}), 1},
		{"json.RawMessage event", func(_ context.Context, ev json.RawMessage) (int, error) { return len(ev), nil }, 1},
		{"typed event", func(_ context.Context, ev event) (int, error) { return len(ev.Data) + 11, nil }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countBuffers(t, tt.handler, payload, len(strconv.Itoa(copyTestSize)), copyTestSize, "16MiB"); got != tt.copies {
				t.Fatalf("%d payload-sized buffers per invocation, docs/memory.md says %d", got, tt.copies)
			}
		})
	}
}

// countBuffers serves handler with the retain cap given, invokes it with
// payload, and returns the buffers of size unit the runtime allocates per
// invocation, rounded, besides the test's own: the fake API's body of the
// response (respSize bytes) and the payload as []byte.
func countBuffers(t *testing.T, handler any, payload string, respSize, unit int, retain string) int {
	t.Helper()
	return countBuffersAt(t, 1, handler, payload, respSize, unit, retain)
}

// countBuffersAt is countBuffers with n slots, invoked one at a time.
func countBuffersAt(t *testing.T, n int, handler any, payload string, respSize, unit int, retain string) int {
	t.Helper()
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, MaxResponseBytes: 8 << 20})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n), "LMIGO_BUFFER_RETAIN_BYTES": retain}, handler)
	check := func() {
		t.Helper()
		r := invoke(t, api, payload)
		if r.Err != nil || len(r.Body) != respSize {
			t.Fatalf("got %d bytes, want %d; %+v", len(r.Body), respSize, r.Err)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	check() // warm up: connections, pools
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	check()
	const rounds = 4
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds {
		check()
	}
	runtime.ReadMemStats(&after)
	// Less the fake API's body of the response and invoke's []byte of the
	// payload.
	perInv := float64(after.TotalAlloc-before.TotalAlloc)/rounds - float64(respSize) - float64(len(payload))
	t.Logf("%.0f bytes allocated per invocation besides the test's (%.2f units of %d)", perInv, perInv/float64(unit), unit)
	return int(math.Round(perInv / float64(unit)))
}

// TestInvokerBytesAtN: aws-lambda-go's own lambda.Handler returns the
// bytes of a pooled buffer that it has put back when Invoke returns. At
// any N each answer must still be its own invocation's, byte for byte, and
// under -race no read of that buffer may race a later Invoke's write
// (callInvoker runs its function and copies before the buffer goes back).
func TestInvokerBytesAtN(t *testing.T) {
	for _, n := range []int{1, 8} {
		t.Run("N="+strconv.Itoa(n), func(t *testing.T) {
			const total = 2000
			api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: 30 * time.Second})
			// The answer is the event's string, encoded into the pooled
			// buffer; sizes vary (up to 66 KiB, past what rapi copies behind
			// the headers) so that a buffer is reused at many lengths.
			h := lambda.NewHandler(func(ev struct{ S string }) (string, error) { return ev.S, nil })
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, h)
			invokeDistinct(t, api, total, 2*n, func(i int) (req, want []byte) {
				s := strconv.Itoa(i) + strings.Repeat("-", i%97*700)
				return []byte(`{"S":"` + s + `"}`), []byte(`"` + s + `"`)
			})
		})
	}
}

// TestAWSHandlerFunc: the value of aws-lambda-go's lambda.NewHandler, with
// options or without, is run through its own function (whose reader puts
// its buffer back on Close), and answers what its Invoke answers; no other
// lambda.Handler is taken for it. On an aws-lambda-go whose shape differs
// this fails, and callInvoker falls back to a copy after Invoke.
func TestAWSHandlerFunc(t *testing.T) {
	f := func(ev struct{ S string }) (map[string]string, error) { return map[string]string{"s": ev.S + "<"}, nil }
	for name, h := range map[string]lambda.Handler{
		"NewHandler":            lambda.NewHandler(f),
		"NewHandlerWithOptions": lambda.NewHandlerWithOptions(f, lambda.WithSetEscapeHTML(true), lambda.WithSetIndent("", " ")),
	} {
		t.Run(name, func(t *testing.T) {
			fn := awsHandlerFunc(h)
			if fn == nil {
				t.Fatal("not recognised as aws-lambda-go's own lambda.Handler")
			}
			payload := []byte(`{"S":"a"}`)
			want, err := h.Invoke(t.Context(), payload)
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.Clone(want)
			r, err := fn(t.Context(), payload)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := r.(io.Closer); !ok {
				t.Fatalf("its function's reader is a %T, not aws-lambda-go's pooled buffer: the fallback was taken", r)
			}
			var out Buffer
			if err := callAWS(t.Context(), fn, payload, &out); err != nil || string(out.B) != string(want) {
				t.Fatalf("callAWS: %q, %v; Invoke: %q", out.B, err, want)
			}
		})
	}
	for _, h := range []lambda.Handler{invokerFunc(func(context.Context, []byte) ([]byte, error) { return nil, nil }), NewHandler(f)} {
		if awsHandlerFunc(h) != nil {
			t.Errorf("%T taken for aws-lambda-go's own lambda.Handler", h)
		}
	}
}

// TestInvokerKeepsPayload: a lambda.Handler may keep the payload it was
// given, as it may under aws-lambda-go; later invocations must not
// overwrite it.
func TestInvokerKeepsPayload(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	var kept [][]byte
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, invokerFunc(func(_ context.Context, p []byte) ([]byte, error) {
		kept = append(kept, p) // one invocation at a time: no race
		return []byte(`{}`), nil
	}))
	want := []string{`{"n":"first"}`, `{"n":"2nd"}`, `{"n":"third!"}`}
	for _, p := range want {
		if r := invoke(t, api, p); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	for i, p := range kept {
		if string(p) != want[i] {
			t.Errorf("payload %d kept by the handler reads %q after later invocations, want %q", i, p, want[i])
		}
	}
}

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
