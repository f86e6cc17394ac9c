package lambdatest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdatest"
	"github.com/lmigo/lmigo/concurrent/metrics"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
	"go.uber.org/zap"
)

type order struct {
	ID   int    `json:"id"`
	Note string `json:"note,omitempty"`
}

type receipt struct {
	ID     int    `json:"id"`
	Status string `json:"status"`
}

type handlerFunc func(ctx context.Context, payload []byte) ([]byte, error)

func (h handlerFunc) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return h(ctx, payload)
}

// TestStartHandlerForms serves every form of handler the runtime takes
// and reads each answer as its caller would.
func TestStartHandlerForms(t *testing.T) {
	tests := []struct {
		name    string
		handler any
		payload string
		want    string
		wantErr string // the error as the caller reads it
	}{
		{"func()", func() {}, `{}`, `null`, ""},
		{"func() error", func() error { return errors.New("no") }, `{}`, "", "errorString: no"},
		{"func(T) error", func(o order) error { return nil }, `{"id":1}`, `null`, ""},
		{"func() (U, error)", func() (receipt, error) { return receipt{ID: 1, Status: "ok"}, nil }, `{}`, `{"id":1,"status":"ok"}`, ""},
		{"func(ctx) error", func(context.Context) error { return nil }, `{}`, `null`, ""},
		{"func(ctx, T) error", func(_ context.Context, o order) error { return fmt.Errorf("order %d", o.ID) }, `{"id":2}`, "", "errorString: order 2"},
		{"func(T) (U, error)", func(o order) (receipt, error) { return receipt{o.ID, "seen"}, nil }, `{"id":3}`, `{"id":3,"status":"seen"}`, ""},
		{"func(ctx, T) (U, error)", func(ctx context.Context, o order) (receipt, error) {
			lc, _ := lambdacontext.FromContext(ctx)
			return receipt{o.ID, lc.InvokedFunctionArn}, nil
		}, `{"id":4}`, `{"id":4,"status":"arn:aws:lambda:us-east-1:123456789012:function:lmigo-fake"}`, ""},
		{"func(ctx, []byte) ([]byte, error)", func(_ context.Context, b []byte) ([]byte, error) { return b, nil }, `"cmF3"`, `"cmF3"`, ""},
		{"func(ctx, T) (io.Reader, error)", func(_ context.Context, o order) (io.Reader, error) {
			return strings.NewReader(fmt.Sprint("streamed ", o.ID)), nil
		}, `{"id":5}`, `streamed 5`, ""},
		{"lambda.Handler", handlerFunc(func(_ context.Context, b []byte) ([]byte, error) { return append([]byte("h:"), b...), nil }), `x`, `h:x`, ""},
		{"RawHandler", concurrent.RawHandler(func(_ context.Context, b []byte, out *concurrent.Buffer) error {
			out.B = append(out.B, b...)
			return nil
		}), `raw`, `raw`, ""},
		{"panic", func(context.Context, order) (receipt, error) { panic("boom") }, `{"id":6}`, "", "string: boom"},
		{"bad event", func(o order) (receipt, error) { return receipt{}, nil }, `{"id":"x"}`, "", "UnmarshalTypeError: json: cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := lambdatest.Start(t, tt.handler)
			res := f.Invoke([]byte(tt.payload))
			if tt.wantErr != "" {
				if res.Err == nil || !strings.HasPrefix(res.Err.Error(), tt.wantErr) || res.Payload != nil {
					t.Fatalf("Err %v, payload %q; want %q...", res.Err, res.Payload, tt.wantErr)
				}
				return
			}
			if res.Err != nil || string(res.Payload) != tt.want {
				t.Fatalf("got %q, %v; want %q", res.Payload, res.Err, tt.want)
			}
		})
	}
}

// TestInvokeTimeout: a handler past its deadline ends its invocation as
// the platform ends it.
func TestInvokeTimeout(t *testing.T) {
	release := make(chan struct{})
	f := lambdatest.Start(t, func(context.Context) error {
		<-release // past the deadline: the platform ends the invocation first
		return nil
	}, lambdatest.WithTimeout(50*time.Millisecond))
	t.Cleanup(func() { close(release) }) // before the runtime stops
	res := f.Invoke([]byte(`{}`))
	var e *lambdatest.Error
	if !errors.As(res.Err, &e) || e.Type != "Sandbox.Timedout" || !strings.Contains(e.Message, "timed out") {
		t.Fatalf("Err %#v, want Sandbox.Timedout", res.Err)
	}
}

// TestWedgedFailsTheTest: a runtime whose every slot is held by a handler
// that ignores its context, past LMIGO_WEDGED_EXIT, would exit on Lambda.
// Under lambdatest it fails the test that owns it, naming the request
// IDs, and the test process lives on.
func TestWedgedFailsTheTest(t *testing.T) {
	t.Setenv("LMIGO_OVERRUN_GRACE", "1ms")
	t.Setenv("LMIGO_MAX_OVERRUNS", "0")
	t.Setenv("LMIGO_WEDGED_EXIT", "1ms")
	release := make(chan struct{})
	ft := &fakeTB{TB: t}
	var res lambdatest.Result
	var wedged bool
	ft.run(func() {
		defer close(release) // before the runtime stops
		f := lambdatest.Start(ft, func(context.Context) error {
			<-release // ignores its context
			return nil
		}, lambdatest.WithConcurrency(1), lambdatest.WithTimeout(20*time.Millisecond))
		res = f.Invoke([]byte(`{}`))
		wedged = ft.waitError("lambdatest: the runtime is wedged")
		// The runtime is stopped, as the process would have exited.
		if after := f.Invoke([]byte(`{}`)); after.Err == nil {
			t.Errorf("an invocation after the wedged exit was answered: %s", after.Payload)
		}
	})
	var e *lambdatest.Error
	if !errors.As(res.Err, &e) || e.Type != "Sandbox.Timedout" {
		t.Fatalf("Err %v, want Sandbox.Timedout", res.Err)
	}
	if want := "the runtime is wedged: every slot is held by a handler that overran its deadline and ignores its context (request IDs " +
		res.RequestID + "); on Lambda it would exit 1 now"; !wedged || !strings.Contains(ft.text(), want) {
		t.Fatalf("the test failed with:\n%s\nwant %q", ft.text(), want)
	}
}

// TestRuntimeLinesLogged: the runtime's lines of no invocation (its start
// and stop, the WARN for an LMIGO_ variable it does not know) are logged
// to the test, which go test shows with -v and on failure; once each
// through CheckIsolation's child processes.
func TestRuntimeLinesLogged(t *testing.T) {
	t.Setenv("LMIGO_SLOT", "4") // a typo of LMIGO_SLOTS
	warn := `"level":"WARN","timestamp":"`
	typo := `"message":"unknown variable ignored","variable":"LMIGO_SLOT","nearest":"LMIGO_SLOTS"`
	t.Run("Start", func(t *testing.T) {
		ft := &fakeTB{TB: t}
		ft.run(func() {
			f := lambdatest.Start(ft, func() {})
			f.Invoke([]byte(`{}`))
		})
		got := ft.logged()
		for _, want := range []string{typo, `"message":"runtime starting"`, `"message":"runtime stopped"`} {
			if !strings.Contains(got, want) {
				t.Errorf("the test's log:\n%s\nwant a line with %s", got, want)
			}
		}
		if !strings.Contains(got, "runtime: {"+strings.TrimSuffix(warn, `"timestamp":"`)) || ft.Failed() {
			t.Errorf("the WARN line is not logged as the runtime's, or the test failed (%q):\n%s", ft.text(), got)
		}
	})
	t.Run("CheckIsolation", func(t *testing.T) {
		ft := &fakeTB{TB: t}
		ft.run(func() { lambdatest.CheckIsolation(ft, func() {}, [][]byte{[]byte(`{}`), []byte(`{}`)}) })
		got := ft.logged()
		if n := strings.Count(got, typo); n != 1 || ft.Failed() {
			t.Errorf("the WARN is logged %d times, want once; failures %q:\n%s", n, ft.text(), got)
		}
		if n := strings.Count(got, `"message":"runtime starting"`); n != 1 {
			t.Errorf("%d start lines logged, want those of the child serving at once:\n%s", n, got)
		}
	})
	t.Run("as go test -v shows them", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs a child process")
		}
		args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestRuntimeLinesChild$", "-test.count=1", "-test.v")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), linesEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// Each at the call of the test that started the runtime, not in
		// lambdatest's own files.
		var lines []string
		for l := range strings.Lines(string(out)) {
			if strings.Contains(l, "runtime: {") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		for _, want := range []string{typo, `"message":"runtime stopped"`, "(while the events were served at once (round 1))"} {
			if !strings.Contains(strings.Join(lines, "\n"), want) {
				t.Errorf("no line with %s in:\n%s", want, out)
			}
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "lambdatest_test.go:") {
				t.Errorf("a runtime line is not shown at the test's call:\n  %.160s", l)
			}
		}
	})
}

const linesEnv = "LAMBDATEST_LINES_CHILD"

// TestRuntimeLinesChild is the child of TestRuntimeLinesLogged that go
// test runs with -v.
func TestRuntimeLinesChild(t *testing.T) {
	if os.Getenv(linesEnv) == "" {
		t.Skip("the child of TestRuntimeLinesLogged")
	}
	f := lambdatest.Start(t, func() {})
	f.Invoke([]byte(`{}`))
	lambdatest.CheckIsolation(t, func() {}, [][]byte{[]byte(`{}`), []byte(`{}`)})
}

// TestStartRestoresMemoryLimit: Run sets the soft memory limit from the
// function's memory size; the test process gets its own back at Cleanup,
// also when two Functions overlap.
func TestStartRestoresMemoryLimit(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
	before := debug.SetMemoryLimit(-1)
	t.Run("two", func(t *testing.T) {
		handler := func(context.Context) (string, error) { return debugLimit(), nil }
		a := lambdatest.Start(t, handler)
		b := lambdatest.Start(t, handler)
		for _, f := range []*lambdatest.Function{a, b} {
			if res := f.Invoke([]byte(`{}`)); res.Err != nil || string(res.Payload) == fmt.Sprintf("%q", fmt.Sprint(before)) {
				t.Fatalf("the runtime set no limit of its own: %s %v", res.Payload, res.Err)
			}
		}
	})
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Fatalf("soft memory limit %d after the Functions stopped, want %d as before", after, before)
	}
}

// TestParallelFunctions: three Functions in parallel tests, one of which
// ends mid-way, each hold only their own lines and metrics, and the
// process's state is the same afterwards.
func TestParallelFunctions(t *testing.T) {
	t.Setenv("POWERTOOLS_METRICS_NAMESPACE", "lambdatest")
	type state struct {
		limit int64
		procs int
		wd    string
		env   []string
	}
	now := func() state {
		wd, _ := os.Getwd()
		env := os.Environ()
		slices.Sort(env)
		return state{debug.SetMemoryLimit(-1), runtime.GOMAXPROCS(0), wd, env}
	}
	before := now()
	handler := func(ctx context.Context, o order) (receipt, error) {
		concurrent.Logger(ctx).Info("order", zap.Int("id", o.ID))
		if err := metrics.AddMetadata(ctx, "orderId", o.ID); err != nil {
			return receipt{}, err
		}
		return receipt{o.ID, "stored"}, metrics.Add(ctx, "Orders", metrics.Count, 1)
	}
	t.Run("group", func(t *testing.T) {
		for fn := range 3 {
			t.Run(fmt.Sprint(fn), func(t *testing.T) {
				t.Parallel()
				f := lambdatest.Start(t, handler, lambdatest.WithConcurrency(4))
				var wg sync.WaitGroup
				for i := range 16 {
					id := 1000*fn + i
					wg.Go(func() {
						r := f.Invoke(fmt.Appendf(nil, `{"id":%d}`, id))
						own := fmt.Sprintf(`"requestId":"%s"`, r.RequestID)
						for _, l := range append(append([]string(nil), r.Logs...), r.Metrics...) {
							if !strings.Contains(l, own) || (!strings.Contains(l, fmt.Sprint(id)) && !strings.Contains(l, "ColdStart")) {
								t.Errorf("Function %d, order %d holds a line not its own: %s", fn, id, l)
							}
						}
						if r.Err != nil || len(r.Logs) != 1 || len(r.Metrics) == 0 {
							t.Errorf("Function %d, order %d: %v, %d lines, %d documents", fn, id, r.Err, len(r.Logs), len(r.Metrics))
						}
					})
				}
				wg.Wait()
				if fn == 1 {
					t.SkipNow() // ends mid-way: the cleanup still stops the runtime
				}
			})
		}
	})
	if after := now(); after.limit != before.limit || after.procs != before.procs || after.wd != before.wd || !slices.Equal(after.env, before.env) {
		t.Fatalf("the process's state changed: before %+v\nafter %+v", before, after)
	}
}

// TestStartRestoresTraceEnv: at N=1 the runtime sets _X_AMZN_TRACE_ID to
// each invocation's trace; the test process gets its own value back, or
// none, once the Function has stopped.
func TestStartRestoresTraceEnv(t *testing.T) {
	for _, before := range []string{"", "Root=1-00000000-000000000000000000000000;Sampled=0"} {
		t.Run(fmt.Sprintf("before %q", before), func(t *testing.T) {
			t.Setenv("_X_AMZN_TRACE_ID", before) // restored after the test
			if before == "" {
				_ = os.Unsetenv("_X_AMZN_TRACE_ID")
			}
			t.Run("N=1", func(t *testing.T) {
				f := lambdatest.Start(t, func(ctx context.Context) (string, error) {
					return os.Getenv("_X_AMZN_TRACE_ID"), nil
				}, lambdatest.WithConcurrency(1))
				res := f.Invoke([]byte(`{}`))
				if res.Err != nil || !strings.Contains(string(res.Payload), "Root=") || string(res.Payload) == fmt.Sprintf("%q", before) {
					t.Fatalf("the handler read _X_AMZN_TRACE_ID %s, %v; want its invocation's trace", res.Payload, res.Err)
				}
			})
			got, set := os.LookupEnv("_X_AMZN_TRACE_ID")
			if set != (before != "") || got != before {
				t.Fatalf("_X_AMZN_TRACE_ID is %q (set: %v) after the Function stopped, want %q as before", got, set, before)
			}
		})
	}
}

func debugLimit() string { return fmt.Sprint(debug.SetMemoryLimit(-1)) }

type ctxKey string

// TestWithLambdaOptions passes each of aws-lambda-go's options through
// concurrent.WithLambdaOptions and sees what it does in an answer.
func TestWithLambdaOptions(t *testing.T) {
	type in struct {
		N any    `json:"n"`
		S string `json:"s"`
	}
	echo := func(_ context.Context, v in) (in, error) { return v, nil }
	base := context.WithValue(context.Background(), ctxKey("base"), "from WithContext")
	fromCtx := func(ctx context.Context) (string, error) {
		return fmt.Sprint(ctx.Value(ctxKey("base")), ", ", ctx.Value(ctxKey("v"))), nil
	}
	tests := []struct {
		name    string
		handler any
		opts    []lambda.Option
		payload string
		want    string
		wantErr string
	}{
		{"none", echo, nil, `{"n":1.50,"s":"<a>"}`, `{"n":1.5,"s":"<a>"}`, ""},
		{"WithSetIndent", echo, []lambda.Option{lambda.WithSetIndent("", " ")}, `{"n":1,"s":""}`, "{\n \"n\": 1,\n \"s\": \"\"\n}\n", ""},
		{"WithSetEscapeHTML", echo, []lambda.Option{lambda.WithSetEscapeHTML(true)}, `{"n":1,"s":"<a>"}`, `{"n":1,"s":"\u003ca\u003e"}`, ""},
		{"WithUseNumber", echo, []lambda.Option{lambda.WithUseNumber(true)}, `{"n":1.50,"s":""}`, `{"n":1.50,"s":""}`, ""},
		{"WithDisallowUnknownFields", echo, []lambda.Option{lambda.WithDisallowUnknownFields(true)}, `{"n":1,"x":2}`, "",
			`errorString: json: unknown field "x"`},
		{"WithContext and WithContextValue", fromCtx, []lambda.Option{lambda.WithContext(base), lambda.WithContextValue(ctxKey("v"), "from WithContextValue")},
			`{}`, `"from WithContext, from WithContextValue"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := lambdatest.Start(t, tt.handler, lambdatest.WithRuntime(concurrent.WithLambdaOptions(tt.opts...)))
			res := f.Invoke([]byte(tt.payload))
			if tt.wantErr != "" {
				if res.Err == nil || !strings.HasPrefix(res.Err.Error(), tt.wantErr) {
					t.Fatalf("Err %v, want %q", res.Err, tt.wantErr)
				}
				return
			}
			if res.Err != nil || string(res.Payload) != tt.want {
				t.Fatalf("got %q, %v; want %q", res.Payload, res.Err, tt.want)
			}
		})
	}

	// lambda.WithEnableSIGTERM: its callbacks run when the runtime stops,
	// at the end of the test that started it.
	var ran atomic.Int32
	t.Run("WithEnableSIGTERM", func(t *testing.T) {
		f := lambdatest.Start(t, echo, lambdatest.WithRuntime(concurrent.WithLambdaOptions(lambda.WithEnableSIGTERM(func() { ran.Add(1) }))))
		if res := f.Invoke([]byte(`{}`)); res.Err != nil {
			t.Fatal(res.Err)
		}
		if ran.Load() != 0 {
			t.Fatal("the SIGTERM callback ran before the runtime stopped")
		}
	})
	if ran.Load() != 1 {
		t.Fatalf("the SIGTERM callback ran %d times, want once when the runtime stopped", ran.Load())
	}

	t.Run("unreadable", func(t *testing.T) {
		ft := &fakeTB{TB: t}
		ft.run(func() { lambdatest.Start(ft, echo, lambdatest.WithRuntime(concurrent.WithLambdaOptions(nil))) })
		if !ft.fatal || !strings.Contains(ft.text(), "lambda.Option 0 is nil") {
			t.Fatalf("Start with a nil lambda.Option: %q, want a fatal naming it", ft.text())
		}
	})
}

// TestInvokeLogsAndMetrics serves 64 distinct invocations at once, each
// logging through zap, slog and the runtime's slog handler and writing
// metrics, and checks that each Result holds its own lines and documents
// and no other's.
func TestInvokeLogsAndMetrics(t *testing.T) {
	t.Setenv("POWERTOOLS_METRICS_NAMESPACE", "lambdatest")
	handler := func(ctx context.Context, o order) (receipt, error) {
		concurrent.Logger(ctx).Info("zap line")
		concurrent.Slog(ctx).Info("slog line", "id", o.ID)
		slog.New(concurrent.SlogHandler()).InfoContext(ctx, "slog handler line", "id", o.ID)
		if err := metrics.AddMetadata(ctx, "orderId", o.ID); err != nil {
			return receipt{}, err
		}
		if err := metrics.Add(ctx, "Orders", metrics.Count, float64(o.ID)); err != nil {
			return receipt{}, err
		}
		return receipt{o.ID, "stored"}, nil
	}
	const n = 64
	f := lambdatest.Start(t, handler, lambdatest.WithConcurrency(n))
	results := make([]lambdatest.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i] = f.Invoke(fmt.Appendf(nil, `{"id":%d}`, 1000+i)) })
	}
	wg.Wait()
	coldStarts := 0
	for i, r := range results {
		id := 1000 + i
		if r.Err != nil || string(r.Payload) != fmt.Sprintf(`{"id":%d,"status":"stored"}`, id) {
			t.Fatalf("invocation %d: %s, %v", i, r.Payload, r.Err)
		}
		var msgs []string
		for _, l := range r.Logs {
			var line struct {
				Message   string `json:"message"`
				RequestID string `json:"requestId"`
				ID        int    `json:"id"`
			}
			if err := json.Unmarshal([]byte(l), &line); err != nil || line.RequestID != r.RequestID {
				t.Fatalf("invocation %d: line %s not its own (%v)", i, l, err)
			}
			if line.Message != "zap line" && line.ID != id {
				t.Errorf("invocation %d: line %s carries another's id", i, l)
			}
			msgs = append(msgs, line.Message)
		}
		if want := []string{"zap line", "slog line", "slog handler line"}; !slices.Equal(msgs, want) {
			t.Errorf("invocation %d logged %q, want %q", i, msgs, want)
		}
		var orders int
		for _, d := range r.Metrics {
			var doc struct {
				RequestID string  `json:"requestId"`
				OrderID   int     `json:"orderId"`
				Orders    float64 `json:"Orders"`
				ColdStart float64 `json:"ColdStart"`
			}
			if err := json.Unmarshal([]byte(d), &doc); err != nil || doc.RequestID != r.RequestID {
				t.Fatalf("invocation %d: document %s not its own (%v)", i, d, err)
			}
			switch {
			case doc.ColdStart == 1:
				coldStarts++
			case doc.OrderID != id || doc.Orders != float64(id):
				t.Errorf("invocation %d: document %s carries another's values", i, d)
			default:
				orders++
			}
		}
		if orders != 1 {
			t.Errorf("invocation %d wrote %d Orders documents, want 1: %q", i, orders, r.Metrics)
		}
	}
	if coldStarts != 1 {
		t.Errorf("%d ColdStart documents, want 1", coldStarts)
	}
}

// TestInvokeLogsFiledByRequestID: a line is its invocation's by its first
// top-level requestId, matched exactly, whatever other request IDs it
// carries (a downstream's, under any case, nested, or a second requestId).
func TestInvokeLogsFiledByRequestID(t *testing.T) {
	handler := func(ctx context.Context, o order) (receipt, error) {
		log := concurrent.Logger(ctx)
		ds := fmt.Sprint("downstream-", o.ID)
		log.Info("requestID", zap.String("requestID", ds))
		log.Info("RequestId", zap.String("RequestId", ds))
		log.Info("REQUESTID", zap.String("REQUESTID", ds))
		log.Info("nested", zap.Any("downstream", map[string]string{"requestId": ds}))
		log.Info("second", zap.String("requestId", ds))
		return receipt{o.ID, "stored"}, nil
	}
	f := lambdatest.Start(t, handler, lambdatest.WithConcurrency(2))
	for id := 1; id <= 2; id++ {
		res := f.Invoke(fmt.Appendf(nil, `{"id":%d}`, id))
		var msgs []string
		for _, l := range res.Logs {
			var line struct{ Message string }
			_ = json.Unmarshal([]byte(l), &line)
			msgs = append(msgs, line.Message)
			if !strings.Contains(l, `"requestId":"`+res.RequestID+`"`) {
				t.Errorf("invocation %d holds a line of another: %s", id, l)
			}
		}
		if want := []string{"requestID", "RequestId", "REQUESTID", "nested", "second"}; !slices.Equal(msgs, want) {
			t.Errorf("invocation %d: lines %q, want %q", id, msgs, want)
		}
	}
}

// TestOptionsAreTheirOwn: lambdatest's options cannot be given to
// concurrent.New, nor the runtime's to Start but through WithRuntime:
// Go's assignability, which the compiler checks, as reflect reports it.
func TestOptionsAreTheirOwn(t *testing.T) {
	runtimeOption := reflect.TypeFor[concurrent.Option]()
	for name, fn := range map[string]any{
		"WithConcurrency": lambdatest.WithConcurrency, "WithTimeout": lambdatest.WithTimeout,
		"WithRounds": lambdatest.WithRounds, "WithNormalize": lambdatest.WithNormalize,
		"WithCompare": lambdatest.WithCompare,
	} {
		if out := reflect.TypeOf(fn).Out(0); out.AssignableTo(runtimeOption) {
			t.Errorf("lambdatest.%s returns a %v, which concurrent.New takes", name, out)
		}
	}
	if start := reflect.TypeOf(lambdatest.Start); runtimeOption.AssignableTo(start.In(2).Elem()) {
		t.Errorf("lambdatest.Start takes a concurrent.Option as its own")
	}
}

// TestOptionsRefused: an option no run can honour fails the test at once,
// naming it.
func TestOptionsRefused(t *testing.T) {
	for _, tt := range []struct {
		opt  lambdatest.Option
		want string
	}{
		{lambdatest.WithConcurrency(0), "WithConcurrency(0): N is at least 1"},
		{lambdatest.WithRounds(0), "WithRounds(0)"},
		{lambdatest.WithTimeout(-time.Second), "WithTimeout(-1s)"},
	} {
		ft := &fakeTB{TB: t}
		ft.run(func() { lambdatest.CheckIsolation(ft, func() {}, [][]byte{[]byte(`{}`)}, tt.opt) })
		if !ft.fatal || !strings.Contains(ft.text(), tt.want) {
			t.Errorf("CheckIsolation with %s: %q, want a fatal naming it", tt.want, ft.text())
		}
	}
}
