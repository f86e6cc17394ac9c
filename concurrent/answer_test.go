package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// typedReader is an io.Reader result with a content type of its own.
type typedReader struct {
	r  io.Reader
	ct string
}

func (r typedReader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r typedReader) ContentType() string        { return r.ct }

// TestUnsendableAnswersGetAnError: answers the Runtime API would refuse, or
// that rapi refuses to write, for a reason on the runtime's side (a header
// value with a control byte or too long, an error body over the 1 MiB the
// Runtime API reads) still end their invocation at once, never by its
// deadline.
func TestUnsendableAnswersGetAnError(t *testing.T) {
	const n = 2
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	long := strings.Repeat("T", 9000)
	huge := strings.Repeat("m", 2<<20)
	handler := func(_ context.Context, ev struct{ Case string }) (any, error) {
		switch ev.Case {
		case "type control byte":
			return nil, messages.InvokeResponse_Error{Message: "m", Type: "Bad\x01Type"}
		case "type 9000 bytes":
			return nil, messages.InvokeResponse_Error{Message: "m", Type: long}
		case "panic type control byte":
			panic(messages.InvokeResponse_Error{Message: "m", Type: "Bad\r\nType"})
		case "panic type 9000 bytes":
			panic(messages.InvokeResponse_Error{Message: "m", Type: long})
		case "message 2 MiB":
			return nil, errors.New(huge)
		case "content type crlf":
			return typedReader{strings.NewReader("body"), "text/plain\r\nX-Evil: 1"}, nil
		case "content type 9000 bytes":
			return typedReader{strings.NewReader("body"), long}, nil
		}
		return "ok", nil
	}
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, handler)
	tests := []struct {
		name     string
		wantType string // the error type of the answer; "" for a response
	}{
		{"type control byte", invalidErrorType},
		{"type 9000 bytes", invalidErrorType},
		{"panic type control byte", invalidErrorType},
		{"panic type 9000 bytes", invalidErrorType},
		{"message 2 MiB", "errorString"},
		{"content type crlf", ""},
		{"content type 9000 bytes", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := api.Invoke(ctx, rapitest.Request{
				Payload: []byte(`{"Case":"` + tt.name + `"}`),
				Timeout: 10 * time.Second, // what ending by the deadline would take
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantType == "" {
				if res.Err != nil || string(res.Body) != "body" || res.ContentType != bytesContentType {
					t.Fatalf("got %+v (err %+v), want the body as %s", res, res.Err, bytesContentType)
				}
				return
			}
			if res.Err == nil || res.Err.Type != tt.wantType {
				t.Fatalf("got %+v (err %+v), want an error answer of type %s", res, res.Err, tt.wantType)
			}
			var doc messages.InvokeResponse_Error
			if err := json.Unmarshal(res.Err.Body, &doc); err != nil || doc.Message == "" {
				t.Fatalf("error body %.200q: %v", res.Err.Body, err)
			}
			if len(res.Err.Body) > maxErrorBody {
				t.Fatalf("error body of %d bytes, over %d", len(res.Err.Body), maxErrorBody)
			}
		})
	}
	answeredOnce(t, api)
}

// staticAnswer is a response a RawHandler hands over in an array of its own.
var staticAnswer = []byte(`{"static":"answer"}`)

// TestRawHandlerForeignArray: a RawHandler may set out.B to an array the
// runtime did not lend (one of its own, shared by every invocation, or the
// payload); the answer is sent from it, and the array is never written to,
// pooled or lent to another invocation.
func TestRawHandlerForeignArray(t *testing.T) {
	const n, total = 8, 1600
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	raw := RawHandler(func(_ context.Context, payload []byte, out *Buffer) error {
		switch payload[0] {
		case 's':
			out.B = staticAnswer
		case 'p':
			out.B = payload
		case 'e':
			out.B = staticAnswer
			return errors.New("failed after replacing out.B")
		default:
			out.B = append(out.B, "own:"...)
			out.B = append(out.B, payload...)
		}
		return nil
	})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, raw)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wrong []string
	for c := range n {
		wg.Go(func() {
			for i := c; i < total; i += n {
				kind := "spxo"[i%4]
				if i%50 == 7 {
					kind = 'e'
				}
				payload := fmt.Sprintf("%c-%d-%s", kind, i, strings.Repeat("z", i%300))
				res, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(payload)})
				want := map[byte]string{'s': string(staticAnswer), 'p': payload, 'x': "own:" + payload, 'o': "own:" + payload}[kind]
				var got string
				switch {
				case err != nil:
					got = err.Error()
				case kind == 'e' && res.Err != nil:
					continue
				case res.Err != nil:
					got = res.Err.Type
				default:
					got = string(res.Body)
				}
				if got != want {
					mu.Lock()
					wrong = append(wrong, fmt.Sprintf("%.40q: got %.60q", payload, got))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(wrong) > 0 {
		t.Fatalf("%d of %d answers wrong, e.g. %v", len(wrong), total, wrong[:min(len(wrong), 3)])
	}
	if string(staticAnswer) != `{"static":"answer"}` {
		t.Fatalf("the handler's own array was written to: %q", staticAnswer)
	}
	answeredOnce(t, api)
}

// TestShutdownFailsHalfReadInvocation: a shutdown that comes while the
// answer to a /next is half read (its request ID known, its body not)
// still answers that invocation, with an error, before Run returns.
func TestShutdownFailsHalfReadInvocation(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1})
	rt, err := New(sleepy, WithLookupEnv(api.Env(map[string]string{"LMIGO_SHUTDOWN_TIMEOUT": "2s"})), WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, 1)
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	// The headers go whole, the body stops after a few bytes and hangs.
	payload := bytes.Repeat([]byte("p"), 64<<10)
	got := make(chan rapitest.Result, 1)
	go func() {
		res, _ := api.Invoke(wctx, rapitest.Request{Payload: payload, Timeout: 10 * time.Second,
			Fault: &rapitest.Fault{Cut: 4 << 10, Stall: time.Hour}})
		got <- res
	}()
	// Its request ID is read once the runtime blocks in the body.
	waitUntil(t, "the runtime reading the body", func() bool {
		buf := make([]byte, 1<<20)
		return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("rapi.(*body).readAll"))
	})
	stop()
	if err := wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	res := <-got
	if res.Err == nil || res.Err.Type != errTypeTruncatedInvocation {
		t.Fatalf("got %+v (err %+v), want a %s error answer", res, res.Err, errTypeTruncatedInvocation)
	}
	answeredOnce(t, api)
}

// blockingReader streams one chunk, then waits for release before EOF.
type blockingReader struct {
	started chan<- struct{}
	release <-chan struct{}
	sent    bool
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		r.started <- struct{}{}
		return copy(p, "first"), nil
	}
	<-r.release
	return 0, io.EOF
}

// TestShutdownQueuesNoPollBehindStreams: streams still running when the
// shutdown begins end without a poll behind them, so that no /next is left
// registered once Run returns (the Runtime API would hand it an invocation
// that nobody reads).
func TestShutdownQueuesNoPollBehindStreams(t *testing.T) {
	const n = 16
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	started := make(chan struct{}, n)
	release := make(chan struct{})
	handler := func(context.Context, json.RawMessage) (io.Reader, error) {
		return &blockingReader{started: started, release: release}, nil
	}
	rt, err := New(handler, WithLookupEnv(api.Env(map[string]string{"LMIGO_SHUTDOWN_TIMEOUT": "5s"})), WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, rt, n)
	ictx, icancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer icancel()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { _, _ = api.Invoke(ictx, rapitest.Request{Payload: []byte(`{}`)}) })
	}
	for range n {
		<-started
	}
	stop()
	waitUntil(t, "the pollers stopped", func() bool { return rt.stopping.Load() })
	close(release)
	if err := wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	wg.Wait()
	if st := answeredOnce(t, api); st.PendingPolls != 0 {
		t.Fatalf("%d polls left registered after Run returned: %+v", st.PendingPolls, st)
	}
}

// TestNewWithoutRunLeaksNothing: a Runtime that is built and dropped
// without Run leaves no goroutine behind.
func TestNewWithoutRunLeaksNothing(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 4})
	before := goleak.IgnoreCurrent()
	for range 3 {
		if _, err := New(sleepy, WithLookupEnv(env{"AWS_LAMBDA_RUNTIME_API": api.Addr(),
			"AWS_LAMBDA_MAX_CONCURRENCY": "4"}.lookup), WithLogger(zap.NewNop())); err != nil {
			t.Fatal(err)
		}
	}
	goleak.VerifyNone(t, before)
}

// runStoppable runs rt and waits until api holds n of its polls. stop
// cancels Run; wait returns what Run returned, failing the test if Run has
// not returned within 20 s. The test's end stops it too.
func runStoppable(t *testing.T, api *rapitest.Server, rt *Runtime, n int) (stop func(), wait func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(cancel)
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	if err := api.WaitPolls(wctx, n); err != nil {
		t.Fatal(err)
	}
	return cancel, func() error {
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return")
			return nil
		}
	}
}

// TestAnswerReplyNeverComes: a Runtime API that takes an answer and whose
// reply does not come whole costs the slot until the later of the
// invocation's deadline plus the grace and rapi's StallTimeout after the
// post, not for good. Then its connection is cut, one WARN line names the
// request ID, and the slot serves again, polls plus invocations within N
// all along. The reply never comes (reply); only its status line comes
// (head); it never comes, nor the reply to the answer posted again once cut,
// which is under the same bound from its own post (re-post); the first post
// is read and never taken, and the one posted again is accepted (re-post
// accepted: the cut is logged all the same). A stream whose caller got
// errTypeStreamInterrupted has it logged and counted in Errors, once; one
// whose caller got the stream has neither. A cut is no outage: the slot
// polls again at once, with no line of a failed poll. Buffered (the reply left to
// the next poll), large (read at once) and streamed answers, at N=1, and at
// N=2 with both slots' replies stalled at once.
func TestAnswerReplyNeverComes(t *testing.T) {
	const (
		grace   = 50 * time.Millisecond
		timeout = 200 * time.Millisecond
		stall   = 100 * time.Millisecond // rapi's StallTimeout: the least wait after a post
	)
	large := strings.Repeat("x", 100<<10)
	forms := []struct {
		name    string
		handler any
		want    string
	}{
		{"buffered", func(context.Context, struct{}) (string, error) { return "ok", nil }, `"ok"`},
		{"large", func(context.Context, struct{}) (string, error) { return large, nil }, `"` + large + `"`},
		{"streamed", func(context.Context, struct{}) (io.Reader, error) { return strings.NewReader("ok"), nil }, "ok"},
	}
	never := &rapitest.Fault{Stall: time.Hour}
	unread := &rapitest.Fault{Drop: true, ReadBody: true, Stall: time.Hour} // read whole, never taken
	faults := []struct {
		name  string
		reply *rapitest.Fault // the reply to the answer, which is taken
		// first and again replace the first and the second post of the
		// invocation: read, not taken, never answered.
		first, again *rapitest.Fault
		bounds       int // the bounds waited out, one after the other
	}{
		{"reply", never, nil, nil, 1},
		{"head", &rapitest.Fault{Raw: []byte("HTTP/1.1 202 Accepted\r\n"), Stall: time.Hour}, nil, nil, 1},
		{"re-post", never, nil, unread, 2},
		{"re-post accepted", nil, unread, nil, 1},
	}
	for _, f := range faults {
		for _, form := range forms {
			for _, n := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%s/N=%d", f.name, form.name, n), func(t *testing.T) {
					t.Parallel()
					var (
						armed atomic.Bool
						mu    sync.Mutex
						posts = map[string]int{}
					)
					api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, Faults: func(_ int, r *http.Request) *rapitest.Fault {
						if r.Method != http.MethodPost || !armed.Load() {
							return nil
						}
						id := path.Base(path.Dir(r.URL.Path)) // .../{id}/response
						mu.Lock()
						posts[id]++
						k := posts[id]
						mu.Unlock()
						switch k {
						case 1:
							return f.first
						case 2:
							return f.again
						}
						return nil
					}})
					log, logs := observe()
					rt, err := New(form.handler, WithLogger(log), WithLookupEnv(api.Env(map[string]string{
						"LMIGO_OVERRUN_GRACE": grace.String(), "LMIGO_METRICS": "emf",
					})), withRAPIOptions(rapi.WithStallTimeout(stall)))
					if err != nil {
						t.Fatal(err)
					}
					rt.metrics.out, rt.metrics.interval = io.Discard, time.Hour // counted here, not emitted
					stop, wait := runStoppable(t, api, rt, n)
					ctx, cancel := testContext(t)
					defer cancel()
					// The runtime's deadline, from the header; the fake keeps
					// its own minute, so that it takes an answer posted again.
					start := time.Now()
					deadline := time.UnixMilli(start.Add(timeout).UnixMilli())
					armed.Store(true)
					var wg sync.WaitGroup
					ids := make([]string, n)
					interrupted := make([]bool, n)
					for i := range n {
						wg.Go(func() {
							r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`), PostFault: f.reply,
								Headers: map[string]string{"Lambda-Runtime-Deadline-Ms": strconv.FormatInt(deadline.UnixMilli(), 10)}})
							ids[i] = r.RequestID
							interrupted[i] = r.Err != nil && r.Err.Type == errTypeStreamInterrupted && f.first != nil
							if err != nil || (r.Err != nil || string(r.Body) != form.want) && !interrupted[i] {
								t.Errorf("invocation: %.40q, %+v, %v", r.Body, r.Err, err)
							}
						})
					}
					wg.Wait()
					wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
					defer wcancel()
					if err := api.WaitPolls(wctx, n); err != nil {
						t.Fatalf("a slot still waits for its reply: %v; stats %+v", err, api.Stats())
					}
					armed.Store(false)
					// The slot logs the cut before it polls again.
					bound := deadline.Add(grace)
					if after := start.Add(stall); after.After(bound) {
						bound = after
					}
					bound = bound.Add(time.Duration(f.bounds-1) * stall)
					failed := 0
					for i, id := range ids {
						want := 0
						if interrupted[i] {
							want, failed = 1, failed+1
						}
						var lines []observer.LoggedEntry
						for _, e := range logs.FilterMessage("invocation failed").All() {
							if m := e.ContextMap(); m[keyRequestID] == id && m["errorType"] == errTypeStreamInterrupted {
								lines = append(lines, e)
							}
						}
						if len(lines) != want {
							t.Errorf("%d lines of the interrupted stream's failure, want %d", len(lines), want)
						}
						var warns []observer.LoggedEntry
						for _, e := range logs.FilterMessage(msgNoReply).All() {
							if e.ContextMap()[keyRequestID] == id {
								warns = append(warns, e)
							}
						}
						if len(warns) != 1 || warns[0].Level != zapcore.WarnLevel {
							t.Fatalf("want one WARN line naming %s: %v", id, warns)
						}
						if warns[0].Time.Before(bound) {
							t.Errorf("cut %v before its bound", bound.Sub(warns[0].Time))
						}
					}
					if got := rt.metrics.errors.Load(); got != uint64(failed) {
						t.Errorf("Errors %d, want %d: the interrupted streams", got, failed)
					}
					if polls := logs.FilterMessageSnippet("polling for the next invocation"); rt.outage.down.Load() || polls.Len() != 0 {
						t.Errorf("a cut taken for an outage: %v", polls.All())
					}
					if r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{}`)}); err != nil || r.Err != nil {
						t.Fatalf("the next invocation: %+v, %v", r.Err, err)
					}
					stop()
					if err := wait(); err != nil {
						t.Fatal(err)
					}
					if st := api.Stats(); st.Violations != 0 || st.MaxOutstanding > int64(n) || st.Timeouts != 0 || st.Unknown != 0 {
						t.Fatalf("stats %+v", st)
					}
				})
			}
		}
	}
}

// lettered answers {"Size":n} with the first n letters of a repeated
// alphabet, and {"Fail":true,"Size":n} with an error of an n-byte message.
var lettered = RawHandler(func(_ context.Context, payload []byte, out *Buffer) error {
	var ev struct {
		Size int
		Fail bool
	}
	_ = json.Unmarshal(payload, &ev)
	if ev.Fail {
		return errors.New(letters(ev.Size))
	}
	out.B = append(out.B, letters(ev.Size)...)
	return nil
})

func letters(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}

// logged finds the line msg about invocation id.
func logged(logs *observer.ObservedLogs, msg, id string) (observer.LoggedEntry, bool) {
	for _, e := range logs.FilterMessage(msg).All() {
		if e.ContextMap()["requestId"] == id {
			return e, true
		}
	}
	return observer.LoggedEntry{}, false
}

// TestAnswerPostedAgainAfterConnEnds: the Runtime API reads an answer whole,
// then resets or closes the connection without a reply. The answer is
// posted once more on a fresh connection, so that the invocation ends with
// it, not at its deadline, and the slot polls only once its invocation is
// over (never above N). When the first post had been taken, the second is
// refused (400), which is logged at INFO, not as a lost answer. A stream
// cannot be read twice: an /error ends its invocation instead. The report
// line (LMIGO_REPORT=on) says what the caller got.
func TestAnswerPostedAgainAfterConnEnds(t *testing.T) {
	streamed := func(context.Context, json.RawMessage) (io.Reader, error) {
		return strings.NewReader("streamed"), nil
	}
	answers := []struct {
		name    string
		handler any
		payload string
		want    func(r rapitest.Result, accepted bool) bool
	}{
		{"response", lettered, `{"Size":3}`, func(r rapitest.Result, _ bool) bool {
			return r.Err == nil && string(r.Body) == "abc"
		}},
		{"response over 4 KiB", lettered, `{"Size":65536}`, func(r rapitest.Result, _ bool) bool {
			return r.Err == nil && string(r.Body) == letters(65536)
		}},
		{"error", lettered, `{"Fail":true,"Size":5}`, func(r rapitest.Result, _ bool) bool {
			return r.Err != nil && r.Err.Type == "errorString" && strings.Contains(string(r.Err.Body), `"abcde"`)
		}},
		{"error over 4 KiB", lettered, `{"Fail":true,"Size":10000}`, func(r rapitest.Result, _ bool) bool {
			return r.Err != nil && r.Err.Type == "errorString" && strings.Contains(string(r.Err.Body), letters(10000))
		}},
		{"stream", streamed, `{}`, func(r rapitest.Result, accepted bool) bool {
			if accepted {
				return r.Err == nil && string(r.Body) == "streamed"
			}
			return r.Err != nil && r.Err.Type == errTypeStreamInterrupted
		}},
	}
	ends := []struct {
		name     string
		fault    rapitest.Fault
		accepted bool // the post was served before the connection ended
	}{
		{"closed unanswered", rapitest.Fault{Drop: true, ReadBody: true}, false},
		{"reset unanswered", rapitest.Fault{Reset: true, ReadBody: true}, false},
		{"reset after accepting", rapitest.Fault{Reset: true}, true},
	}
	for _, a := range answers {
		for _, end := range ends {
			t.Run(a.name+"/"+end.name, func(t *testing.T) {
				t.Parallel()
				var faulted atomic.Bool
				opts := rapitest.Options{MaxConcurrency: 1, Timeout: 5 * time.Second}
				if !end.accepted {
					opts.Faults = func(_ int, r *http.Request) *rapitest.Fault {
						if r.Method != http.MethodPost || faulted.Swap(true) {
							return nil
						}
						return &end.fault
					}
				}
				api := newAPI(t, opts)
				log, logs := observe()
				serve(t, api, env{"LMIGO_REPORT": "on"}, a.handler, WithLogger(log))
				req := rapitest.Request{Payload: []byte(a.payload)}
				if end.accepted {
					req.PostFault = &end.fault
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				res, err := api.Invoke(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if !a.want(res, end.accepted) {
					t.Fatalf("Invoke = %.100q, %+v; stats %+v", res.Body, res.Err, api.Stats())
				}
				if err := api.WaitPolls(ctx, 1); err != nil { // the slot polls again
					t.Fatal(err)
				}
				if end.accepted {
					waitUntil(t, "the second post's refusal logged", func() bool {
						_, ok := logged(logs, msgRefusedAgain, res.RequestID)
						return ok
					})
					if e, _ := logged(logs, msgRefusedAgain, res.RequestID); e.Level != zapcore.InfoLevel {
						t.Fatalf("logged at %v, want INFO", e.Level)
					}
				}
				if e, ok := refusal(logs, res.RequestID); ok {
					t.Fatalf("logged as a refusal: %v %v", e.Level, e.ContextMap())
				}
				waitUntil(t, "the report line", func() bool {
					_, ok := logged(logs, msgReport, res.RequestID)
					return ok
				})
				e, _ := logged(logs, msgReport, res.RequestID)
				want := map[string]any{"outcome": outcomeOK}
				if res.Err != nil {
					want = map[string]any{"outcome": outcomeError, "errorType": res.Err.Type}
				}
				for k, v := range want {
					if got := e.ContextMap()[k]; got != v {
						t.Errorf("report line's %s %v, want %v", k, got, v)
					}
				}
				st := api.Stats()
				wantDup := int64(0)
				if end.accepted {
					wantDup = 1
				}
				if st.Ended() != st.Invocations || st.Timeouts != 0 || st.Duplicates != wantDup || st.Unknown != 0 ||
					st.Violations != 0 || st.MaxOutstanding > 1 {
					t.Fatalf("not answered exactly once within N: %+v", st)
				}
			})
		}
	}
}

// TestShutdownReadsUnreadAnswer: at shutdown, an answer whose reply is still
// unread (the slot's next poll reads it) is not reported as refused: the
// reply is read within the shutdown budget, and one that does not come in
// time is logged at INFO as unconfirmed.
func TestShutdownReadsUnreadAnswer(t *testing.T) {
	for _, tt := range []struct {
		name        string
		fault       *rapitest.Fault // on the reply to the post
		budget      string
		unconfirmed bool
	}{
		{"reply unread", nil, "10s", false},
		{"reply late", &rapitest.Fault{Stall: time.Hour}, "300ms", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1})
			log, logs := observe()
			rt, err := New(lettered, WithLookupEnv(api.Env(map[string]string{"LMIGO_SHUTDOWN_TIMEOUT": tt.budget})), WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			stop, wait := runStoppable(t, api, rt, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"Size":3}`), PostFault: tt.fault})
			if err != nil || res.Err != nil || string(res.Body) != "abc" {
				t.Fatalf("Invoke = %q, %+v, %v", res.Body, res.Err, err)
			}
			stop()
			if err := wait(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, e := range logs.All() {
				t.Logf("%v %s %v", e.Level, e.Message, e.ContextMap())
			}
			if e, ok := refusal(logs, res.RequestID); ok {
				t.Fatalf("an accepted answer logged as refused at shutdown: %v %v", e.Level, e.ContextMap())
			}
			e, ok := logged(logs, msgUnconfirmed, res.RequestID)
			if ok != tt.unconfirmed || ok && e.Level != zapcore.InfoLevel {
				t.Fatalf("unconfirmed logged %v (at %v), want %v at INFO", ok, e.Level, tt.unconfirmed)
			}
			answeredOnce(t, api)
		})
	}
}
