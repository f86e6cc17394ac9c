package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

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
// cannot be read twice: an /error ends its invocation instead.
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
				serve(t, api, env{}, a.handler, WithLogger(log))
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
