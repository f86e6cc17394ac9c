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
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/concurrent/internal/leftover"
	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// stReader returns one piece per Read (a long one over several), then
// fails with err (io.EOF when nil). A piece "!panic" panics and "!goexit"
// calls runtime.Goexit.
type stReader struct {
	pieces []string
	err    error
	i, off int
	closed atomic.Bool
	ctype  string
}

func (r *stReader) Read(p []byte) (int, error) {
	if r.i == len(r.pieces) {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	s := r.pieces[r.i]
	switch s {
	case "!panic":
		panic("reader broke")
	case "!goexit":
		runtime.Goexit()
	}
	n := copy(p, s[r.off:])
	if r.off += n; r.off == len(s) {
		r.i, r.off = r.i+1, 0
	}
	return n, nil
}

func (r *stReader) Close() error { r.closed.Store(true); return nil }

// stTyped adds a ContentType method.
type stTyped struct{ *stReader }

func (t stTyped) ContentType() string { return t.ctype }

// stEvent selects a reader in the handler below.
type stEvent struct {
	Case string
	Big  int
}

type stError struct{ msg string }

func (e *stError) Error() string { return e.msg }

// streamAPI runs the handler of TestStreaming with N = 2; reader returns
// the reader of the last invocation of a case.
func streamAPI(t *testing.T, e env) (api *rapitest.Server, logs *observer.ObservedLogs, reader func(string) *stReader) {
	api = newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	core, logs := observer.New(zap.DebugLevel)
	var mu sync.Mutex
	readers := map[string]*stReader{}
	serve(t, api, e, func(ev stEvent) (io.Reader, error) {
		r := &stReader{ctype: "text/event-stream"}
		switch ev.Case {
		case "typed":
			r.pieces = []string{"data: 1\n\n", "data: 2\n\n"}
		case "late error":
			r.pieces, r.err = []string{"partial"}, &stError{"lost the source"}
		case "early error":
			r.err = &stError{"no source"}
		case "late panic":
			r.pieces = []string{"partial", "!panic"}
		case "early panic":
			r.pieces = []string{"!panic"}
		case "late goexit":
			r.pieces = []string{"partial", "!goexit"}
		case "early goexit":
			r.pieces = []string{"!goexit"}
		case "big":
			r.pieces = []string{strings.Repeat("b", ev.Big)}
		}
		mu.Lock()
		readers[ev.Case] = r
		mu.Unlock()
		if ev.Case == "typed" {
			return stTyped{r}, nil
		}
		return r, nil
	}, WithLogger(zap.New(core)))
	return api, logs, func(c string) *stReader {
		mu.Lock()
		defer mu.Unlock()
		return readers[c]
	}
}

// TestStreaming: a reader result is streamed whole, with its content type,
// and closed afterwards; a read error (or panic) after the first byte goes
// in the trailers, before it as an ordinary /error; LMIGO_MAX_RESPONSE_BYTES
// does not bound a stream; the process keeps serving.
func TestStreaming(t *testing.T) {
	api, logs, reader := streamAPI(t, env{"LMIGO_MAX_RESPONSE_BYTES": "64KiB"})
	big := 1 << 20
	tests := []struct {
		name     string
		body     string // streamed before the end or the error
		ctype    string
		errType  string // "" for success
		errMsg   string
		trailer  bool
		panicked bool
	}{
		{name: "typed", body: "data: 1\n\ndata: 2\n\n", ctype: "text/event-stream"},
		{name: "big", body: strings.Repeat("b", big), ctype: "application/octet-stream"},
		{name: "late error", body: "partial", errType: "stError", errMsg: "lost the source", trailer: true},
		{name: "early error", errType: "stError", errMsg: "no source"},
		{name: "late panic", body: "partial", errType: "string", errMsg: "reader broke", trailer: true, panicked: true},
		{name: "early panic", errType: "string", errMsg: "reader broke", panicked: true},
		{name: "early goexit", errType: "Runtime.HandlerExited", errMsg: "the response reader called runtime.Goexit"},
		{name: "late goexit", body: "partial", errType: rapitest.ErrorTypeTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := invoke(t, api, fmt.Sprintf(`{"Case":%q,"Big":%d}`, tt.name, big))
			if tt.errType == "" {
				if r.Err != nil || string(r.Body) != tt.body || r.ContentType != tt.ctype || r.ResponseMode != rapitest.ResponseModeStreaming {
					t.Fatalf("got %d bytes %q, mode %q, err %+v", len(r.Body), r.ContentType, r.ResponseMode, r.Err)
				}
			} else {
				if r.Err == nil || r.Err.Type != tt.errType || r.Err.Trailer != tt.trailer {
					t.Fatalf("got err %+v, want type %s, trailer %v", r.Err, tt.errType, tt.trailer)
				}
				if tt.trailer && (string(r.Body) != tt.body || r.ResponseMode != rapitest.ResponseModeStreaming) {
					t.Fatalf("streamed %q in mode %q before the error", r.Body, r.ResponseMode)
				}
				if tt.errMsg != "" {
					var doc struct {
						Message string `json:"errorMessage"`
						Type    string `json:"errorType"`
					}
					if err := json.Unmarshal(r.Err.Body, &doc); err != nil || doc.Message != tt.errMsg || (doc.Type != tt.errType && tt.errType != "Runtime.HandlerExited") {
						t.Fatalf("error document %s", r.Err.Body)
					}
				}
				if tt.trailer && len(r.Err.Body) > rapi.MaxStreamErrorBody {
					t.Fatalf("trailer document of %d bytes", len(r.Err.Body))
				}
			}
			if !strings.Contains(tt.name, "goexit") {
				// Closed once the Runtime API accepted the answer, which may be
				// just after Invoke returned.
				rd := reader(tt.name)
				for start := time.Now(); !rd.closed.Load(); time.Sleep(time.Millisecond) {
					if time.Since(start) > 5*time.Second {
						t.Fatal("the reader was not closed")
					}
				}
			}
		})
	}
	// Still serving.
	if r := invoke(t, api, `{"Case":"typed"}`); r.Err != nil || string(r.Body) != "data: 1\n\ndata: 2\n\n" {
		t.Fatalf("after the failures: %+v", r)
	}
	failures := logs.FilterMessageSnippet("invocation").FilterLevelExact(zap.ErrorLevel).Len()
	if failures != 6 {
		t.Errorf("%d failures logged, want 6:\n%v", failures, logs.All())
	}
}

// TestStreamingCompat: which results stream. Those aws-lambda-go posts as
// the bytes of a reader do (events' streaming responses included); JSON
// results and lambda.Handler bytes stay buffered. The bytes are those
// aws-lambda-go's own handler produces.
func TestStreamingCompat(t *testing.T) {
	urlResp := func() (*events.LambdaFunctionURLStreamingResponse, error) {
		return &events.LambdaFunctionURLStreamingResponse{StatusCode: 201, Headers: map[string]string{"A": "b"},
			Body: strings.NewReader("streamed body")}, nil
	}
	tests := []struct {
		name    string
		handler any
		stream  bool
		ctype   string
	}{
		{"function URL streaming response", urlResp, true, "application/vnd.awslambda.http-integration-response"},
		{"API Gateway streaming response", func() (*events.APIGatewayProxyStreamingResponse, error) {
			return &events.APIGatewayProxyStreamingResponse{StatusCode: 200, Body: strings.NewReader("gw")}, nil
		}, true, "application/vnd.awslambda.http-integration-response"},
		{"strings.Reader", func() (io.Reader, error) { return strings.NewReader("plain"), nil }, true, "application/octet-stream"},
		{"reader that encodes as JSON", func() (io.Reader, error) {
			return &compatFieldReader{Name: "json wins", r: strings.NewReader("unused")}, nil
		}, false, "application/json"},
		{"struct", func() (events.APIGatewayProxyResponse, error) {
			return events.APIGatewayProxyResponse{StatusCode: 200, Body: "x"}, nil
		}, false, "application/json"},
		{"lambda.Handler", lambda.NewHandler(func() (string, error) { return "h", nil }), false, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			serve(t, api, env{}, tt.handler)
			r := invoke(t, api, `{}`)
			h, ok := tt.handler.(lambda.Handler)
			if !ok {
				h = lambda.NewHandler(tt.handler)
			}
			want, err := h.Invoke(context.Background(), []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if r.Err != nil || !bytes.Equal(r.Body, want) || r.ContentType != tt.ctype || (r.ResponseMode == rapitest.ResponseModeStreaming) != tt.stream {
				t.Fatalf("got %q %q mode %q err %+v; want %q %q stream %v", r.Body, r.ContentType, r.ResponseMode, r.Err, want, tt.ctype, tt.stream)
			}
		})
	}
}

// barrierReader writes its first piece, then waits in its next Read until
// every stream of the group has written its first piece, then writes the
// second. The runtime calls Read again only once the previous chunk is on
// the wire, so the group completes only if no stream waits for another.
type barrierReader struct {
	first, second string
	group         *barrier
	ctx           context.Context
	step          int
}

type barrier struct {
	n       int
	arrived atomic.Int32
	all     chan struct{}
}

func (b *barrier) arrive() {
	if int(b.arrived.Add(1)) == b.n {
		close(b.all)
	}
}

func (r *barrierReader) Read(p []byte) (int, error) {
	r.step++
	switch r.step {
	case 1:
		return copy(p, r.first), nil
	case 2:
		r.group.arrive()
		select {
		case <-r.group.all:
		case <-r.ctx.Done():
			return 0, fmt.Errorf("only %d of %d streams wrote their first chunk", r.group.arrived.Load(), r.group.n)
		}
		return copy(p, r.second), nil
	}
	return 0, io.EOF
}

// TestConcurrentStreamsInterleave: N streams each write a chunk, then wait
// until all N have, then write again. They complete only if each slot
// streams on its own without waiting for the others, which also needs the
// handler's context (the barrier waits on it) to live while it streams.
func TestConcurrentStreamsInterleave(t *testing.T) {
	const n = 4
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	group := &barrier{n: n, all: make(chan struct{})}
	rt := serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": fmt.Sprint(n)}, func(ctx context.Context, ev struct{ ID int }) (io.Reader, error) {
		return &barrierReader{first: fmt.Sprintf("<%d:one>", ev.ID), second: fmt.Sprintf("<%d:two>", ev.ID), group: group, ctx: ctx}, nil
	})
	if rt.cfg.Slots != n {
		t.Fatalf("slots %d, want %d", rt.cfg.Slots, n)
	}
	var wg sync.WaitGroup
	results := make([]rapitest.Result, n)
	for i := range n {
		wg.Go(func() {
			ctx, cancel := testContext(t)
			defer cancel()
			r, err := api.Invoke(ctx, rapitest.Request{Payload: fmt.Appendf(nil, `{"ID":%d}`, i), Timeout: 10 * time.Second})
			if err != nil {
				t.Errorf("invoke %d: %v", i, err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	for i, r := range results {
		if want := fmt.Sprintf("<%d:one><%d:two>", i, i); r.Err != nil || string(r.Body) != want {
			t.Errorf("stream %d: %q %+v, want %q", i, r.Body, r.Err, want)
		}
	}
	if st := api.Stats(); st.NewConns != n || st.Violations != 0 {
		t.Errorf("%d connections for %d slots, %d violations", st.NewConns, n, st.Violations)
	}
}

// TestStreamErrorBodyFits: the trailer document is the /error document
// when it fits, else shorter, and always valid JSON within the bound.
func TestStreamErrorBodyFits(t *testing.T) {
	long := strings.Repeat("é\"<", 2000)
	tests := []struct {
		name string
		err  error
		keep bool // the /error document as it is
	}{
		{"short", errors.New("short"), true},
		{"long message", errors.New(long), false},
		{"panic with stack", newPanicError("boom"), true},
		{"long panic", newPanicError(long), false},
		{"long type", stInvokeError(strings.Repeat("T", 5000), long), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var full, out Buffer
			wantType := writeErrorBody(&full, tt.err)
			typ := writeErrorDoc(&out, tt.err, rapi.MaxStreamErrorBody)
			if typ != wantType || len(out.B) > rapi.MaxStreamErrorBody || !json.Valid(out.B) || bytes.Equal(out.B, full.B) != tt.keep {
				t.Fatalf("type %q (want %q), %d bytes: %.200s", typ, wantType, len(out.B), out.B)
			}
			if !tt.keep && (!bytes.Contains(out.B, []byte(`..."`)) || bytes.Contains(out.B, []byte("stackTrace")) ||
				len(out.B) < rapi.MaxStreamErrorBody-8) { // an escape may not fit in the last bytes
				t.Fatalf("cut %d bytes, too much or without a mark: %.200s", len(out.B), out.B)
			}
		})
	}
}

func stInvokeError(typ, msg string) error {
	return messages.InvokeResponse_Error{Message: msg, Type: typ}
}

// wtBody writes its pieces out, one Write each (io.WriterTo); "!panic"
// panics and "!goexit" calls runtime.Goexit. It is never Read.
type wtBody struct{ pieces []string }

func (b *wtBody) Read([]byte) (int, error) { panic("wtBody is written out, not read") }

func (b *wtBody) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range b.pieces {
		switch p {
		case "!panic":
			panic("writer broke")
		case "!goexit":
			runtime.Goexit()
		}
		k, err := w.Write([]byte(p))
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestStreamingWriterTo: a reader result that writes itself out is
// streamed whole from its own bytes; a panic in WriteTo fails the
// invocation as one in Read does (trailers after the first byte, an
// /error before it), and so does runtime.Goexit.
func TestStreamingWriterTo(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	big := bytes.Repeat([]byte("w"), 2<<20)
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(_ context.Context, c string) (io.Reader, error) {
		switch c {
		case "big":
			return bytes.NewReader(big), nil
		case "late panic":
			return &wtBody{[]string{"partial", "!panic"}}, nil
		case "early panic":
			return &wtBody{[]string{"!panic"}}, nil
		case "late goexit":
			return &wtBody{[]string{"partial", "!goexit"}}, nil
		case "early goexit":
			return &wtBody{[]string{"!goexit"}}, nil
		}
		return &wtBody{[]string{"a", "", "bc"}}, nil
	})
	tests := []struct {
		name    string
		body    string
		errType string
		trailer bool
	}{
		{name: "big", body: string(big)},
		{name: "pieces", body: "abc"},
		{name: "late panic", body: "partial", errType: "string", trailer: true},
		{name: "early panic", errType: "string"},
		{name: "late goexit", body: "partial", errType: rapitest.ErrorTypeTruncated},
		{name: "early goexit", errType: "Runtime.HandlerExited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := json.Marshal(tt.name)
			r := invoke(t, api, string(q))
			if tt.errType == "" {
				if r.Err != nil || string(r.Body) != tt.body || r.ResponseMode != rapitest.ResponseModeStreaming {
					t.Fatalf("got %d bytes in mode %q, err %+v", len(r.Body), r.ResponseMode, r.Err)
				}
				return
			}
			if r.Err == nil || r.Err.Type != tt.errType || r.Err.Trailer != tt.trailer || (tt.trailer && string(r.Body) != tt.body) {
				t.Fatalf("got %q, err %+v; want type %s, trailer %v", abbrev(r.Body), r.Err, tt.errType, tt.trailer)
			}
			if strings.Contains(tt.name, "panic") && !bytes.Contains(r.Err.Body, []byte("writer broke")) {
				t.Fatalf("error document %s", r.Err.Body)
			}
		})
	}
	if r := invoke(t, api, `"pieces"`); r.Err != nil || string(r.Body) != "abc" {
		t.Fatalf("after the failures: %+v", r)
	}
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// TestStreamFailureUnlabelsBeforePost: a stream whose reader fails (an
// error or a panic, before or after the first byte) takes the labels off
// the slot's goroutine before its error goes out, as one that ends does.
// While the reply to the post stalls, a stream's slot still waits in it
// (an early /error's reply is left to the next poll). A profile then shows
// the handler's leftover goroutine, and the slot none.
func TestStreamFailureUnlabelsBeforePost(t *testing.T) {
	bodies := []struct {
		name string
		body func() io.Reader
	}{
		{"late error", func() io.Reader { return &stReader{pieces: []string{"partial"}, err: &stError{"lost"}} }},
		{"early error", func() io.Reader { return &stReader{err: &stError{"no source"}} }},
		{"late panic", func() io.Reader { return &stReader{pieces: []string{"partial", "!panic"}} }},
		{"WriterTo late panic", func() io.Reader { return &wtBody{pieces: []string{"partial", "!panic"}} }},
	}
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			release := make(chan struct{})
			defer close(release)
			rt, err := New(func(context.Context, struct{}) (io.Reader, error) {
				go func() { <-release }() // carries the invocation's labels
				return b.body(), nil
			}, WithLookupEnv(api.Env(nil)), WithLogger(zap.NewNop()))
			if err != nil {
				t.Fatal(err)
			}
			stop, wait := runStoppable(t, api, rt, 1)
			ctx, cancel := testContext(t)
			defer cancel()
			res, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`), PostFault: &rapitest.Fault{Stall: time.Hour}})
			if err != nil || res.Err == nil {
				t.Fatalf("Invoke = %+v, %v; want the stream's error", res.Err, err)
			}
			found, err := leftover.Scan()
			if err != nil {
				t.Fatal(err)
			}
			if c := found[res.RequestID]; c == nil || c.Slot != 0 || c.Unsure != 0 || c.Leftover != 1 {
				t.Errorf("while the answer's reply stalls: %+v; want the leftover goroutine alone", c)
			}
			stop()
			_ = api.Close() // ends the stall
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
