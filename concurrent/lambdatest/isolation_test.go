package lambdatest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdatest"
	"github.com/lmigo/lmigo/concurrent/metrics"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
	"go.uber.org/zap"
)

// downstream stands for a call to another service slow enough that every
// invocation of a burst is in it at once. Served alone (a child process
// of CheckIsolation's), a call returns at once; else it is held until n
// calls are in it, or until its invocation's deadline.
type downstream struct {
	n       int
	mu      sync.Mutex
	waiting int
	round   chan struct{}
}

// newDownstream is a downstream for n events served at once.
func newDownstream(n int) *downstream {
	return &downstream{n: n, round: make(chan struct{})}
}

func (d *downstream) call(ctx context.Context) {
	if lambdatest.ServedAlone() {
		return
	}
	d.mu.Lock()
	ch := d.round
	if d.waiting++; d.waiting == d.n {
		close(ch)
		d.round, d.waiting = make(chan struct{}), 0
	}
	d.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// events is how many events the isolation tests serve: each costs a child
// process.
const events = 8

func orders(n int) [][]byte {
	events := make([][]byte, n)
	for i := range events {
		events[i] = fmt.Appendf(nil, `{"id":%d}`, 100+i)
	}
	return events
}

// sharing are handlers that share request state between invocations, each
// without a data race, so that CheckIsolation alone is what catches them
// under -race too (isolationChildren has the racy ones).
func sharing() map[string]func(*downstream) any {
	return map[string]func(*downstream) any{
		"package variable": func(d *downstream) any {
			var current atomic.Int64 // the order in hand, across the call
			return func(ctx context.Context, o order) (receipt, error) {
				current.Store(int64(o.ID))
				d.call(ctx)
				return receipt{int(current.Load()), "stored"}, nil
			}
		},
		"shared bytes.Buffer": func(d *downstream) any {
			var mu sync.Mutex
			var buf bytes.Buffer
			return func(ctx context.Context, o order) (string, error) {
				mu.Lock()
				buf.Reset()
				fmt.Fprintf(&buf, "order %d", o.ID)
				mu.Unlock()
				d.call(ctx)
				mu.Lock()
				defer mu.Unlock()
				return buf.String(), nil
			}
		},
		"map shared by key": func(d *downstream) any {
			var mu sync.Mutex
			pending := map[string]int{} // keyed by the function, not the invocation
			return func(ctx context.Context, o order) (receipt, error) {
				mu.Lock()
				pending["order"] = o.ID
				mu.Unlock()
				d.call(ctx)
				mu.Lock()
				defer mu.Unlock()
				return receipt{pending["order"], "stored"}, nil
			}
		},
		"logger with a request ID set once": func(d *downstream) any {
			var once sync.Once
			var log *zap.Logger
			return func(ctx context.Context, o order) (receipt, error) {
				once.Do(func() { log = concurrent.Logger(ctx) })
				log.Info("order stored", zap.Int("id", o.ID))
				return receipt{o.ID, "stored"}, nil
			}
		},
		"logger piling up fields": func(*downstream) any {
			var mu sync.Mutex
			var fields []zap.Field // grows with every invocation
			return func(ctx context.Context, o order) (receipt, error) {
				mu.Lock()
				defer mu.Unlock()
				fields = append(fields, zap.Int("user", o.ID))
				concurrent.Logger(ctx).Info("order stored", fields...) // its own user last
				return receipt{o.ID, "stored"}, nil
			}
		},
		"context kept in a package variable": func(*downstream) any {
			var kept atomic.Pointer[context.Context] // the first invocation's
			return func(ctx context.Context, o order) (receipt, error) {
				kept.CompareAndSwap(nil, &ctx)
				concurrent.Logger(*kept.Load()).Info("order stored", zap.Int("id", o.ID),
					zap.String("requestID", fmt.Sprint("downstream-", o.ID)))
				return receipt{o.ID, "stored"}, nil
			}
		},
		"trace kept in a package variable": func(d *downstream) any {
			var last atomic.Value // the trace of the last invocation to start
			return func(ctx context.Context, o order) (string, error) {
				last.Store(concurrent.TraceID(ctx))
				d.call(ctx)
				return fmt.Sprintf("%d traced %s", o.ID, last.Load()), nil
			}
		},
		"first event's value kept": func(*downstream) any {
			var first atomic.Int64 // set once, by the first event served
			return func(ctx context.Context, o order) (receipt, error) {
				first.CompareAndSwap(0, int64(o.ID))
				return receipt{int(first.Load()), "stored"}, nil
			}
		},
		"metrics of another invocation": func(d *downstream) any {
			var last atomic.Pointer[context.Context]
			return func(ctx context.Context, o order) (receipt, error) {
				last.Store(&ctx)
				d.call(ctx)
				// Records in whichever invocation stored last.
				_ = metrics.AddMetadata(*last.Load(), fmt.Sprint("order", o.ID), o.ID)
				_ = metrics.Add(*last.Load(), "Orders", metrics.Count, 1)
				d.call(ctx) // all have recorded before any ends
				return receipt{o.ID, "stored"}, nil
			}
		},
	}
}

// TestCheckIsolationCatches runs CheckIsolation at N=8 on handlers that
// share state, through a fakeTB, and checks that it fails saying where.
func TestCheckIsolationCatches(t *testing.T) {
	t.Setenv("POWERTOOLS_METRICS_NAMESPACE", "lambdatest")
	tests := []struct {
		name string
		want string // in the failure
	}{
		{"package variable", `event \d+ \(\{"id":\d+\}\) answered otherwise served beside 7 others \(round \d\), the answer of event \d+:\n  alone:  \{"id":\d+,"status":"stored"\}\n  beside: \{"id":\d+`},
		{"shared bytes.Buffer", `answered otherwise served beside 7 others .*\n  alone:  "order \d+"\n  beside: "order \d+"`},
		{"map shared by key", `answered otherwise served beside 7 others`},
		{"logger with a request ID set once", `(a log line carrying the request ID of an invocation that had ended was written (in round \d|while event \d+ was served alone)|a line of event \d+ \(\{"id":\d+\}\) carries id=\d+, which event \d+ wrote alone \(round \d\)):\n  \{.*"message":"order stored".*"id":1\d\d`},
		{"logger piling up fields", `a line of event \d+ \(\{"id":\d+\}\) carries user=\d+, which event \d+ wrote alone \(round \d\):\n  \{.*"message":"order stored".*"user":1\d\d,"user":1\d\d`},
		{"context kept in a package variable", `(a log line carrying the request ID of an invocation that had ended was written (in round \d|while event \d+ was served alone)|a line of event \d+ \(\{"id":\d+\}\) carries id=\d+, which event \d+ wrote alone \(round \d\)):\n  \{.*"message":"order stored".*"requestID":"downstream-1\d\d"`},
		{"trace kept in a package variable", `answered otherwise served beside 7 others \(round \d\), with the trace of event \d+:`},
		{"first event's value kept", `event \d+ \(\{"id":\d+\}\) answered otherwise served beside 7 others \(round 1\), the answer of event \d+:`},
		{"metrics of another invocation", `a line of event \d+ \(\{"id":\d+\}\) carries order\d+=\d+, which event \d+ wrote alone \(round \d\):\n  \{"_aws".*"order\d+":\d+`},
	}
	handlers := sharing()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTB{TB: t}
			ft.run(func() {
				lambdatest.CheckIsolation(ft, handlers[tt.name](newDownstream(events)), orders(events))
			})
			got := ft.text()
			if !regexp.MustCompile(tt.want).MatchString(got) {
				t.Fatalf("CheckIsolation failed with:\n%s\nwant a failure matching %q", got, tt.want)
			}
			if !strings.Contains(got, "look for") {
				t.Errorf("the failure does not say what to look for:\n%s", got)
			}
			t.Logf("%.600s", got)
		})
	}
}

// TestCheckIsolationPasses runs CheckIsolation at N=8 on handlers that
// keep each invocation's state its own, with logs, metrics, downstream
// calls, answers carrying their request ID or a time.
func TestCheckIsolationPasses(t *testing.T) {
	t.Setenv("POWERTOOLS_METRICS_NAMESPACE", "lambdatest")
	var served atomic.Int64 // shared on purpose, and kept out of answers
	tests := []struct {
		name    string
		handler func(d *downstream) any
		opts    []lambdatest.Option
	}{
		{"locals, logs and metrics", func(d *downstream) any {
			return func(ctx context.Context, o order) (receipt, error) {
				current := o.ID
				concurrent.Logger(ctx).Info("order", zap.Int("id", current))
				_ = metrics.AddMetadata(ctx, "orderId", current)
				_ = metrics.Add(ctx, "Orders", metrics.Count, 1)
				d.call(ctx)
				served.Add(1)
				return receipt{current, "stored"}, nil
			}
		}, nil},
		{"its request ID in the answer", func(d *downstream) any {
			return func(ctx context.Context, o order) (string, error) {
				d.call(ctx)
				return fmt.Sprintf("%d for %s", o.ID, concurrent.RequestID(ctx)), nil
			}
		}, nil},
		{"its trace in the answer", func(d *downstream) any {
			return func(ctx context.Context, o order) (string, error) {
				d.call(ctx)
				h := concurrent.TraceID(ctx)
				root, _, _ := strings.Cut(strings.TrimPrefix(h, "Root="), ";")
				return fmt.Sprintf("%d traced %s, root %s", o.ID, h, root), nil
			}
		}, nil},
		{"a time in the answer, normalised by its event", func(*downstream) any {
			return func(ctx context.Context, o order) (string, error) {
				return fmt.Sprintf("%d at %s", o.ID, time.Now().Format(time.RFC3339Nano)), nil
			}
		}, []lambdatest.Option{lambdatest.WithNormalize(func(event, answer []byte) []byte {
			// The event says what the answer keeps: its own order, then the time.
			var o order
			if err := json.Unmarshal(event, &o); err != nil {
				return event
			}
			if own := fmt.Sprintf(`"%d at `, o.ID); bytes.HasPrefix(answer, []byte(own)) {
				return []byte(own)
			}
			return answer
		})}},
		{"a count in the answer, compared by its event", func(*downstream) any {
			return func(ctx context.Context, o order) (receipt, error) {
				return receipt{o.ID, fmt.Sprint(served.Add(1))}, nil
			}
		}, []lambdatest.Option{lambdatest.WithCompare(func(event []byte, alone, beside lambdatest.Result) error {
			var o order
			var a, b receipt
			if json.Unmarshal(event, &o) != nil || json.Unmarshal(alone.Payload, &a) != nil || json.Unmarshal(beside.Payload, &b) != nil {
				return fmt.Errorf("unreadable")
			}
			if a.ID != o.ID || b.ID != o.ID {
				return fmt.Errorf("another order")
			}
			return nil
		})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lambdatest.CheckIsolation(t, tt.handler(newDownstream(events)), orders(events), tt.opts...)
		})
	}
}

// TestCheckIsolationRefusesHandler: a handler the runtime cannot serve
// fails the test at once, saying why.
func TestCheckIsolationRefusesHandler(t *testing.T) {
	ft := &fakeTB{TB: t}
	ft.run(func() { lambdatest.CheckIsolation(ft, func(int, int, int) {}, orders(2)) })
	if !ft.fatal || !strings.Contains(ft.text(), "invalid handler") {
		t.Fatalf("CheckIsolation of a func(int, int, int): %q, want a fatal naming the handler", ft.text())
	}
}

// isolationChildren are handlers that share state with data races, the
// mistake as it is made. Under -race the race detector may name them
// first, and a map written at once may end the process; each runs in a
// child process (TestIsolationChild).
var isolationChildren = map[string]func(*downstream) any{
	"package variable": func(d *downstream) any {
		var current int
		return func(ctx context.Context, o order) (receipt, error) {
			current = o.ID
			d.call(ctx)
			return receipt{current, "stored"}, nil
		}
	},
	"shared bytes.Buffer": func(d *downstream) any {
		var buf bytes.Buffer
		return func(ctx context.Context, o order) (string, error) {
			buf.Reset()
			fmt.Fprintf(&buf, "order %d", o.ID)
			d.call(ctx)
			return buf.String(), nil
		}
	},
	"map without a lock": func(d *downstream) any {
		pending := map[string]int{}
		return func(ctx context.Context, o order) (receipt, error) {
			pending["order"] = o.ID
			d.call(ctx)
			return receipt{pending["order"], "stored"}, nil
		}
	},
	"first event's value kept": func(*downstream) any {
		var region int // set once, by the first event served
		return func(ctx context.Context, o order) (receipt, error) {
			if region == 0 {
				region = o.ID
			}
			return receipt{region, "stored"}, nil
		}
	},
	"logger with a request ID set once": func(d *downstream) any {
		var log *zap.Logger
		return func(ctx context.Context, o order) (receipt, error) {
			if log == nil {
				log = concurrent.Logger(ctx)
			}
			log.Info("order stored", zap.Int("id", o.ID))
			return receipt{o.ID, "stored"}, nil
		}
	},
}

const childEnv = "LAMBDATEST_ISOLATION_CHILD"

// TestIsolationChild is the child process of TestCheckIsolationRacy.
func TestIsolationChild(t *testing.T) {
	name := os.Getenv(childEnv)
	if name == "" {
		t.Skip("the child of TestCheckIsolationRacy")
	}
	lambdatest.CheckIsolation(t, isolationChildren[name](newDownstream(events)), orders(events))
}

// TestCheckIsolationRacy runs CheckIsolation at N=8 on the racy handlers,
// each in a child process, and checks that CheckIsolation reports them,
// with or without -race (the race detector may report them too), unless
// Go's own check of a map written at once ended the child first.
func TestCheckIsolationRacy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for name := range isolationChildren {
		t.Run(name, func(t *testing.T) {
			// Under test-arm64 the child runs through qemu too ($LMIGO_RIE_EXEC).
			args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestIsolationChild$", "-test.count=1")
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), childEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("CheckIsolation passed a handler that shares state:\n%s", out)
			}
			s := string(out)
			var by []string
			if strings.Contains(s, "lambdatest: ") && strings.Contains(s, "look for") {
				by = append(by, "CheckIsolation")
			}
			if raceEnabled && strings.Contains(s, "WARNING: DATA RACE") {
				by = append(by, "the race detector")
			}
			if strings.Contains(s, "fatal error: concurrent map") {
				by = append(by, "Go's map check")
			}
			// Go's map check ends the child before CheckIsolation can report.
			if !slices.Contains(by, "CheckIsolation") && !slices.Contains(by, "Go's map check") {
				t.Fatalf("CheckIsolation did not report the handler:\n%s", out)
			}
			t.Logf("caught by %s", strings.Join(by, ", "))
		})
	}
}

// TestCheckIsolationChildEnds: a handler that ends its process on one
// event (log.Fatal on a request path) fails the test, saying which event
// ended which child and with what output.
func TestCheckIsolationChildEnds(t *testing.T) {
	handler := func(ctx context.Context, o order) (receipt, error) {
		if o.ID == 101 {
			log.Fatalf("order %d: no such order", o.ID) // only ever in a child
		}
		return receipt{o.ID, "stored"}, nil
	}
	ft := &fakeTB{TB: t}
	ft.run(func() { lambdatest.CheckIsolation(ft, handler, orders(3)) })
	got := ft.text()
	for _, want := range []string{
		`the process ended \(exit status 1\) while event 1 \({"id":101}\) was served alone, in a child process of the test: on Lambda, log.Fatal, os.Exit or a crash on a request path ends every invocation in flight; its last output:\n(.*\n)*.*order 101: no such order`,
		`the process ended \(exit status 1\) while the events were served at once \(round 1\), in a child process of the test`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("CheckIsolation failed with:\n%s\nwant a failure matching %q", got, want)
		}
	}
	if strings.Contains(got, "event 0 ") || strings.Contains(got, "event 2 ") {
		t.Errorf("CheckIsolation blamed an event that did not end its process:\n%s", got)
	}
	t.Logf("%.1500s", got)
}

// TestCheckIsolationCallNotReached: a test that does not reach its
// CheckIsolation call again in a child process fails, saying so.
func TestCheckIsolationCallNotReached(t *testing.T) {
	if lambdatest.IsChild() {
		return // as a test whose path depends on what varies between runs
	}
	ft := &fakeTB{TB: t}
	ft.run(func() {
		lambdatest.CheckIsolation(ft, func(o order) (receipt, error) { return receipt{o.ID, "stored"}, nil }, orders(2))
	})
	if want := "it ran no such CheckIsolation call (a test must make its calls the same way each time it runs)"; !strings.Contains(ft.text(), want) {
		t.Fatalf("CheckIsolation failed with:\n%s\nwant %q", ft.text(), want)
	}
}

// TestCheckIsolationWedged: a runtime that wedges in a child process (every
// slot held by a handler that ignores its context) fails the test, naming
// the hung invocations, and the child's work ends.
func TestCheckIsolationWedged(t *testing.T) {
	t.Setenv("LMIGO_OVERRUN_GRACE", "1ms")
	t.Setenv("LMIGO_MAX_OVERRUNS", "0")
	t.Setenv("LMIGO_WEDGED_EXIT", "1ms")
	handler := func(context.Context, order) (receipt, error) {
		<-make(chan struct{}) // ignores its context; only ever in a child
		return receipt{}, nil
	}
	ft := &fakeTB{TB: t}
	ft.run(func() { lambdatest.CheckIsolation(ft, handler, orders(2), lambdatest.WithTimeout(20*time.Millisecond)) })
	want := `while the events were served at once \(round \d\), in a child process: the runtime is wedged: every slot is held by a handler that overran its deadline and ignores its context \(request IDs [0-9a-f-]{36}, [0-9a-f-]{36}\); on Lambda it would exit 1 now`
	if !regexp.MustCompile(want).MatchString(ft.text()) {
		t.Fatalf("CheckIsolation failed with:\n%s\nwant a failure matching %q", ft.text(), want)
	}
	// The runtime's own lines about the hung invocations are not the
	// handler's lines written after its invocation ended.
	if strings.Contains(ft.text(), "had ended") {
		t.Errorf("CheckIsolation blamed the runtime's own lines on the handler:\n%s", ft.text())
	}
}

// TestCheckIsolationVariesEvenAlone: an answer that varies by nature (a
// random token, a first-invocation flag) fails saying that it varies even
// alone, naming the event and WithNormalize, and blames no shared state.
func TestCheckIsolationVariesEvenAlone(t *testing.T) {
	tests := []struct {
		name    string
		handler func() any
	}{
		{"a random token", func() any {
			return func(o order) (string, error) {
				return fmt.Sprintf("%d token %016x", o.ID, rand.Uint64()), nil
			}
		}},
		{"a cold-start flag", func() any {
			var served atomic.Bool // the process's, not the event's
			return func(o order) (string, error) {
				return fmt.Sprintf("%d cold %v", o.ID, !served.Swap(true)), nil
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTB{TB: t}
			ft.run(func() { lambdatest.CheckIsolation(ft, tt.handler(), orders(3)) })
			got := ft.text()
			for i := range 3 {
				want := fmt.Sprintf(`event %d ({"id":%d}) answered otherwise even alone`, i, 100+i)
				if !strings.Contains(got, want) {
					t.Errorf("CheckIsolation failed with:\n%s\nwant %q", got, want)
				}
			}
			if !strings.Contains(got, "WithNormalize") {
				t.Errorf("the failure does not point at WithNormalize:\n%s", got)
			}
			for _, blame := range []string{"look for", "beside", "the answer of event"} {
				if strings.Contains(got, blame) {
					t.Errorf("the failure blames shared state (%q):\n%s", blame, got)
				}
			}
			t.Logf("%.700s", got)
		})
	}
}

// TestCheckIsolationClaimsOnlyOneEventsAnswer: an answer beside others is
// said to be another event's only when that event alone, and no other,
// answers so. Here events 1 and 2 both answer "b" alone, and every answer
// beside others is "b": event 0 answered otherwise, of no one event.
func TestCheckIsolationClaimsOnlyOneEventsAnswer(t *testing.T) {
	evs := [][]byte{[]byte(`{"id":1,"note":"a"}`), []byte(`{"id":2,"note":"b"}`), []byte(`{"id":3,"note":"b"}`)}
	d := newDownstream(len(evs))
	var inFlight atomic.Int64
	handler := func(ctx context.Context, o order) (string, error) {
		inFlight.Add(1)
		d.call(ctx) // beside others, all three are in flight
		n := inFlight.Load()
		d.call(ctx) // none has left before all have read
		inFlight.Add(-1)
		if n > 1 {
			return "b", nil // busy: an answer that is no one event's
		}
		return o.Note, nil
	}
	ft := &fakeTB{TB: t}
	ft.run(func() { lambdatest.CheckIsolation(ft, handler, evs) })
	got := ft.text()
	if want := `event 0 ({"id":1,"note":"a"}) answered otherwise served beside 2 others (round 1):`; !strings.Contains(got, want) {
		t.Errorf("CheckIsolation failed with:\n%s\nwant %q", got, want)
	}
	if strings.Contains(got, "the answer of event") || strings.Contains(got, "event 1 ") || strings.Contains(got, "event 2 ") {
		t.Errorf("CheckIsolation named an event whose answer it was not:\n%s", got)
	}
}

const countedEnv = "LAMBDATEST_COUNTED_CHILD"

// TestCheckIsolationCountedChild is the child of TestCheckIsolationCounted.
func TestCheckIsolationCountedChild(t *testing.T) {
	if os.Getenv(countedEnv) == "" {
		t.Skip("the child of TestCheckIsolationCounted")
	}
	lambdatest.CheckIsolation(t, func(o order) (receipt, error) { return receipt{o.ID, "stored"}, nil }, orders(2))
}

// TestCheckIsolationCounted: go test -count runs a test again under its
// name; each run's CheckIsolation call is found by its children.
func TestCheckIsolationCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestCheckIsolationCountedChild$", "-test.count=3")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), countedEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CheckIsolation under -count=3: %v\n%s", err, out)
	}
}

// TestCheckIsolationLineAfterTheEnd: a goroutine the handler leaves
// behind, logging for its invocation once that has ended, is reported.
func TestCheckIsolationLineAfterTheEnd(t *testing.T) {
	var mu sync.Mutex
	var goAhead, logged chan struct{} // of the last invocation's goroutine
	handler := func(ctx context.Context, o order) (receipt, error) {
		mu.Lock()
		prevGo, prevLogged := goAhead, logged
		myGo, myLogged := make(chan struct{}), make(chan struct{})
		goAhead, logged = myGo, myLogged
		mu.Unlock()
		go func() {
			<-myGo // the next invocation has started: this one has ended
			concurrent.Logger(ctx).Info("order audited", zap.Int("id", o.ID))
			close(myLogged)
		}()
		if prevGo != nil {
			close(prevGo)
			<-prevLogged // the line is written while this invocation runs
		}
		return receipt{o.ID, "stored"}, nil
	}
	ft := &fakeTB{TB: t}
	ft.run(func() { lambdatest.CheckIsolation(ft, handler, orders(2)) })
	want := `a log line carrying the request ID of an invocation that had ended was written while event \d was served alone:\n  \{.*"message":"order audited"`
	if !regexp.MustCompile(want).MatchString(ft.text()) {
		t.Fatalf("CheckIsolation failed with:\n%s\nwant a failure matching %q", ft.text(), want)
	}
}

// TestCheckIsolationNamesEventsReadably: events as repositories ship them,
// pretty-printed over many lines and alike for their first hundreds of
// bytes, are each named on one line, by where they differ.
func TestCheckIsolationNamesEventsReadably(t *testing.T) {
	type restEvent struct {
		Resource   string            `json:"resource"`
		Path       string            `json:"path"`
		HTTPMethod string            `json:"httpMethod"`
		Headers    map[string]string `json:"headers"`
		Body       string            `json:"body"`
		Stage      string            `json:"stage"`
	}
	headers := map[string]string{
		"accept":          "application/json",
		"content-type":    "application/json",
		"host":            "m3n5b7v9c2.execute-api.eu-west-1.amazonaws.com",
		"user-agent":      "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15",
		"x-forwarded-for": "203.0.113.88",
	}
	var evs [][]byte
	for _, e := range []struct{ body, stage string }{
		{`{"item":"book"}`, "prod"}, {`{"item":"lamp"}`, "prod"}, {`{"item":"book"}`, "test"},
	} {
		b, err := json.MarshalIndent(restEvent{"/orders", "/orders", "POST", headers, e.body, e.stage}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, b)
	}
	handler := func(order) (string, error) { // names every event: it varies even alone
		return fmt.Sprintf("token %016x", rand.Uint64()), nil
	}
	ft := &fakeTB{TB: t}
	ft.run(func() { lambdatest.CheckIsolation(ft, handler, evs) })
	got := ft.text()
	named := map[string]string{}
	for _, m := range regexp.MustCompile(`event (\d) \((.*)\) answered otherwise even alone`).FindAllStringSubmatch(got, -1) {
		named[m[1]] = m[2]
	}
	want := []string{`\"item\":\"book\"`, `\"item\":\"lamp\"`, `"stage":"test"`}
	labels := map[string]string{}
	for i, w := range want {
		l, ok := named[fmt.Sprint(i)]
		if !ok || !strings.Contains(l, w) || len(l) > 120 {
			t.Errorf("event %d is named (%s), want one line of at most 120 bytes showing %s; CheckIsolation said:\n%s", i, l, w, got)
			continue
		}
		if j, ok := labels[l]; ok {
			t.Errorf("events %s and %d are both named (%s)", j, i, l)
		}
		labels[l] = fmt.Sprint(i)
	}
	t.Logf("named %q", named)
}
