package concurrent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent/internal/errordoc"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// recorder is a log destination that keeps every Write and notes the two
// ways lines could interleave: a Write that is not exactly one whole line,
// and two Writes at once.
type recorder struct {
	busy     atomic.Bool
	overlaps atomic.Int64

	mu     sync.Mutex
	writes []string
	bad    []string
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.busy.CompareAndSwap(false, true) {
		r.overlaps.Add(1)
	}
	// Widen the window in which an unlocked writer would be caught.
	runtime.Gosched()
	line := string(p)
	r.mu.Lock()
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
		r.bad = append(r.bad, line)
	}
	r.writes = append(r.writes, line)
	r.mu.Unlock()
	r.busy.Store(false)
	return len(p), nil
}

func (r *recorder) Sync() error { return nil }

// lines returns every write, failing t if any was not exactly one line or
// two overlapped.
func (r *recorder) lines(t *testing.T) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := r.overlaps.Load(); n != 0 {
		t.Errorf("%d writes overlapped", n)
	}
	for _, b := range r.bad {
		t.Errorf("a write was not one line: %.200q", b)
	}
	return append([]string(nil), r.writes...)
}

// records parses each line as a JSON object.
func (r *recorder) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range r.lines(t) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line is not a JSON object: %v\n%.300s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// testInvocation is the context of an invocation whose logger writes to w.
func testInvocation(w zapcore.WriteSyncer, level limits.Level, requestID, trace, tenant string) context.Context {
	lc := &lambdacontext.LambdaContext{AwsRequestID: requestID, TenantID: tenant}
	return newInvocationContext(context.Background(), lc, trace, newLogger(limits.FormatJSON, level, w))
}

// timestampRE: RFC 3339, UTC, nine digits of the nanoseconds.
var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`)

// TestLogShape: every level under its Lambda name, the timestamp, message,
// the invocation's IDs where present, and the user's fields.
func TestLogShape(t *testing.T) {
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	tests := []struct {
		name      string
		trace     string
		tenant    string
		log       func(ctx context.Context)
		level     string
		wantTrace string
	}{
		{"trace", trace, "", func(ctx context.Context) { Trace(Logger(ctx), "m", zap.Int("n", 1)) }, "TRACE", "1-5759e988-bd862e3fe1be46a994272793"},
		{"trace via Log", "", "", func(ctx context.Context) { Logger(ctx).Log(LevelTrace, "m", zap.Int("n", 1)) }, "TRACE", ""},
		{"debug", trace, "t-1", func(ctx context.Context) { Logger(ctx).Debug("m", zap.Int("n", 1)) }, "DEBUG", "1-5759e988-bd862e3fe1be46a994272793"},
		{"info", "", "t-1", func(ctx context.Context) { Logger(ctx).Info("m", zap.Int("n", 1)) }, "INFO", ""},
		{"warn", trace, "", func(ctx context.Context) { Logger(ctx).Warn("m", zap.Int("n", 1)) }, "WARN", "1-5759e988-bd862e3fe1be46a994272793"},
		{"error", "Sampled=0", "", func(ctx context.Context) { Logger(ctx).Error("m", zap.Int("n", 1)) }, "ERROR", "Sampled=0"},
		{"dpanic is an error", "", "", func(ctx context.Context) { Logger(ctx).DPanic("m", zap.Int("n", 1)) }, "ERROR", ""},
		{"fatal through the core", "", "", func(ctx context.Context) {
			l := Logger(ctx)
			if ce := l.Core().Check(zapcore.Entry{Level: zapcore.FatalLevel, Message: "m", Time: time.Now()}, nil); ce != nil {
				ce.Write(zap.Int("n", 1))
			}
		}, "FATAL", ""},
		{"slog trace", trace, "", func(ctx context.Context) { Slog(ctx).Log(ctx, SlogLevelTrace, "m", "n", 1) }, "TRACE", "1-5759e988-bd862e3fe1be46a994272793"},
		{"slog debug", "", "", func(ctx context.Context) { Slog(ctx).Debug("m", "n", 1) }, "DEBUG", ""},
		{"slog info", "", "t-2", func(ctx context.Context) { slog.New(SlogHandler()).InfoContext(ctx, "m", "n", 1) }, "INFO", ""},
		{"slog warn", "", "", func(ctx context.Context) { slog.New(SlogHandler()).WarnContext(ctx, "m", "n", 1) }, "WARN", ""},
		{"slog error", "", "", func(ctx context.Context) { Slog(ctx).Error("m", "n", 1) }, "ERROR", ""},
		{"slog fatal", "", "", func(ctx context.Context) { Slog(ctx).Log(ctx, SlogLevelFatal, "m", "n", 1) }, "FATAL", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			tt.log(testInvocation(rec, limits.LevelTrace, "req-1", tt.trace, tt.tenant))
			recs := rec.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d lines, want 1", len(recs))
			}
			m := recs[0]
			ts, _ := m["timestamp"].(string)
			if !timestampRE.MatchString(ts) {
				t.Errorf("timestamp %q is not RFC 3339 UTC with nanoseconds", ts)
			}
			if when, err := time.Parse(time.RFC3339Nano, ts); err != nil || time.Since(when).Abs() > time.Minute {
				t.Errorf("timestamp %q: %v", ts, err)
			}
			want := map[string]any{"level": tt.level, "message": "m", "requestId": "req-1", "n": 1.0}
			if tt.wantTrace != "" {
				want["traceId"] = tt.wantTrace
			}
			if tt.tenant != "" {
				want["tenantId"] = tt.tenant
			}
			delete(m, "timestamp")
			if fmt.Sprint(m) != fmt.Sprint(want) {
				t.Errorf("line %v\nwant %v", m, want)
			}
		})
	}
}

// TestLogLevelFilter: AWS_LAMBDA_LOG_LEVEL lets through its level and the
// ones above, through zap and slog alike.
func TestLogLevelFilter(t *testing.T) {
	names := []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR"}
	for _, level := range []limits.Level{limits.LevelTrace, limits.LevelDebug, limits.LevelInfo, limits.LevelWarn, limits.LevelError, limits.LevelFatal} {
		t.Run(level.String(), func(t *testing.T) {
			rec := &recorder{}
			ctx := testInvocation(rec, level, "r", "", "")
			l := Logger(ctx)
			Trace(l, "TRACE")
			l.Debug("DEBUG")
			l.Info("INFO")
			l.Warn("WARN")
			l.Error("ERROR")
			sl := slog.New(SlogHandler())
			sl.Log(ctx, SlogLevelTrace, "TRACE")
			sl.DebugContext(ctx, "DEBUG")
			sl.InfoContext(ctx, "INFO")
			sl.WarnContext(ctx, "WARN")
			sl.ErrorContext(ctx, "ERROR")
			var got []string
			for _, m := range rec.records(t) {
				if m["level"] != m["message"] {
					t.Errorf("level %v for the line %v", m["level"], m["message"])
				}
				got = append(got, m["message"].(string))
			}
			var want []string
			for _, pass := range [][]string{names, names} {
				for i, n := range pass {
					if limits.Level(i-2) >= level {
						want = append(want, n)
					}
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("at %s logged %v, want %v", level, got, want)
			}
		})
	}
}

// TestLogTextFormat: AWS_LAMBDA_LOG_FORMAT=TEXT gives readable lines with
// the same level names and IDs.
func TestLogTextFormat(t *testing.T) {
	rec := &recorder{}
	lc := &lambdacontext.LambdaContext{AwsRequestID: "req-9"}
	ctx := newInvocationContext(context.Background(), lc, "Root=1-abc", newLogger(limits.FormatText, limits.LevelTrace, rec))
	Trace(Logger(ctx), "hello text", zap.String("k", "v"))
	slog.New(SlogHandler()).WarnContext(ctx, "from slog", "n", 2)
	lines := rec.lines(t)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	for i, want := range []string{"\tTRACE\thello text\t", "\tWARN\tfrom slog\t"} {
		l := lines[i]
		ts, _, _ := strings.Cut(l, "\t")
		if json.Valid([]byte(l)) || !timestampRE.MatchString(ts) || !strings.Contains(l, want) ||
			!strings.Contains(l, `"requestId": "req-9"`) || !strings.Contains(l, `"traceId": "1-abc"`) {
			t.Errorf("text line %q", l)
		}
	}
}

func TestTraceRoot(t *testing.T) {
	tests := []struct{ header, want string }{
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1", "1-5759e988-bd862e3fe1be46a994272793"},
		{"Parent=53995c3f42cd8ad8;Root=1-abc;Sampled=0", "1-abc"},
		{"Sampled=1; Root=1-def", "1-def"},
		{"Root=1-only", "1-only"},
		{"1-no-key", "1-no-key"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := traceRoot(tt.header); got != tt.want {
			t.Errorf("traceRoot(%q) = %q, want %q", tt.header, got, tt.want)
		}
	}
}

// TestLoggerOutsideInvocation: without an invocation Logger and Slog give
// the process loggers, never nil, and the context accessors give "".
func TestLoggerOutsideInvocation(t *testing.T) {
	ctx := context.Background()
	if Logger(ctx) != defaultLogger() || Slog(ctx) != defaultSlog {
		t.Fatal("outside an invocation: not the process loggers")
	}
	if RequestID(ctx)+TraceID(ctx)+TenantID(ctx) != "" {
		t.Fatal("IDs outside an invocation")
	}
	// The slog handler falls back to the process logger for a nil context.
	if h := SlogHandler(); h.Enabled(nil, slog.LevelError) != defaultLogger().Core().Enabled(zapcore.ErrorLevel) { //nolint:staticcheck // nil on purpose
		t.Fatal("Enabled(nil, ERROR) disagrees with the process logger")
	}
}

// TestLoggerBuiltOnce: the invocation's loggers are built on first use and
// then shared, also by concurrent callers.
func TestLoggerBuiltOnce(t *testing.T) {
	ctx := testInvocation(&recorder{}, limits.LevelInfo, "r", "", "")
	c := fromContext(ctx)
	if c.logger != nil || c.slogger != nil {
		t.Fatal("loggers built before first use")
	}
	var wg sync.WaitGroup
	zs := make([]*zap.Logger, 8)
	ss := make([]*slog.Logger, 8)
	for i := range 8 {
		wg.Go(func() { zs[i], ss[i] = Logger(ctx), Slog(ctx) })
	}
	wg.Wait()
	for i := range 8 {
		if zs[i] != zs[0] || ss[i] != ss[0] {
			t.Fatal("a second logger was built for one invocation")
		}
	}
	// A derived context still belongs to the invocation.
	if Logger(context.WithValue(ctx, otherKey{}, 1)) != zs[0] {
		t.Fatal("a derived context lost the invocation's logger")
	}
}

type otherKey struct{}

// TestConcurrentInvocationsLog: 512 invocations, 32 at a time, each log
// through Logger(ctx), slog with the context, and a bound Slog(ctx), lines
// of a few bytes and of several KB. Every line is one write, none overlaps
// another, and each carries its own invocation's requestId and traceId.
func TestConcurrentInvocationsLog(t *testing.T) {
	const n, total = 32, 512
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: 30 * time.Second})
	rec := &recorder{}
	sl := slog.New(SlogHandler())
	handler := RawHandler(func(ctx context.Context, payload []byte, out *Buffer) error {
		mark := string(payload)
		i, _ := strconv.Atoi(mark)
		blob := strings.Repeat(string(rune('a'+i%26)), 4096+i*16) // 4 KiB to 12 KiB
		Logger(ctx).Info("zap", zap.String("mark", mark))
		sl.InfoContext(ctx, "slog", "mark", mark, slog.Group("g", "blob", blob))
		runtime.Gosched()
		Logger(ctx).Info("zap big", zap.String("mark", mark), zap.String("blob", blob))
		Slog(ctx).Info("bound slog", "mark", mark)
		_, _ = out.WriteString(mark)
		return nil
	})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)}, handler,
		WithLogger(newLogger(limits.FormatJSON, limits.LevelInfo, rec)))

	type sent struct{ mark, trace string }
	var mu sync.Mutex
	byID := map[string]sent{}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 2 * n {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				mark := strconv.Itoa(int(i))
				trace := fmt.Sprintf("Root=1-%08x-%024d;Parent=%016x;Sampled=1", i, i, i)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(mark), TraceID: trace})
				cancel()
				if err != nil || r.Err != nil || string(r.Body) != mark {
					t.Errorf("invocation %s: %v %+v %q", mark, err, r.Err, r.Body)
					return
				}
				mu.Lock()
				byID[r.RequestID] = sent{mark, trace}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(byID) != total {
		t.Fatalf("%d invocations answered, want %d", len(byID), total)
	}
	perID := map[string]int{}
	big := 0
	for _, m := range rec.records(t) {
		if m["message"] == "runtime starting" { // the runtime's, no invocation's
			continue
		}
		id, _ := m["requestId"].(string)
		s, ok := byID[id]
		if !ok {
			t.Fatalf("line with an unknown requestId: %v", m["requestId"])
		}
		if m["mark"] != s.mark || m["traceId"] != traceRoot(s.trace) {
			t.Fatalf("request %s (mark %s, trace %s) logged mark %v, traceId %v", id, s.mark, s.trace, m["mark"], m["traceId"])
		}
		blob, _ := m["blob"].(string)
		if g, ok := m["g"].(map[string]any); ok {
			blob, _ = g["blob"].(string)
		}
		if blob != "" {
			i, _ := strconv.Atoi(s.mark)
			if blob != strings.Repeat(string(rune('a'+i%26)), 4096+i*16) {
				t.Fatalf("request %s: blob of %d bytes damaged", id, len(blob))
			}
			big++
		}
		perID[id]++
	}
	for id := range byID {
		if perID[id] != 4 {
			t.Errorf("request %s: %d lines, want 4", id, perID[id])
		}
	}
	if big != 2*total {
		t.Errorf("%d large lines, want %d", big, 2*total)
	}
}

// TestLogLinesThroughPipe: lines of up to 25 KiB (under maxLogLine) from
// 16 goroutines and two loggers (so two zapcore locks) on one pipe come out
// whole: each record is one Write, and *os.File serialises Writes.
func TestLogLinesThroughPipe(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	loggers := []*zap.Logger{
		newLogger(limits.FormatJSON, limits.LevelInfo, pw),
		newLogger(limits.FormatJSON, limits.LevelInfo, pw),
	}
	const writers, each = 16, 40
	type line struct {
		W, I int
		Blob string
	}
	got := make(chan []line, 1)
	go func() {
		var lines []line
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("not one JSON line: %v: %.200s", err, sc.Bytes())
				continue
			}
			lines = append(lines, l)
		}
		got <- lines
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				size := 100 << (i % 9) // 100 B to 25 KiB
				loggers[i%2].Info("pipe", zap.Int("W", w), zap.Int("I", i),
					zap.String("Blob", strings.Repeat(string(rune('A'+w)), size)))
			}
		})
	}
	wg.Wait()
	_ = pw.Close()
	lines := <-got
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	for _, l := range lines {
		if l.Blob != strings.Repeat(string(rune('A'+l.W)), 100<<(l.I%9)) {
			t.Fatalf("writer %d line %d: blob of %d bytes damaged", l.W, l.I, len(l.Blob))
		}
	}
}

// TestRuntimeLinesCarryIDs: the runtime's own lines about an invocation
// (a handler error, a panic with its stack, an error the runtime detects)
// carry the same IDs as the handler's lines.
func TestRuntimeLinesCarryIDs(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	core, logs := observer.New(zapcore.DebugLevel)
	serve(t, api, env{"LMIGO_MAX_RESPONSE_BYTES": "16"}, func(ev struct{ Mode string }) (string, error) {
		switch ev.Mode {
		case "panic":
			panic(errors.New("kaboom"))
		case "error":
			return "", errors.New("plain failure")
		}
		return strings.Repeat("x", 32), nil // too large
	}, WithLogger(zap.New(core)))
	logs.TakeAll() // the start-up event
	tests := []struct {
		payload, msg, errorType, errorMessage string
		stack                                 bool
	}{
		{`{"Mode":"panic"}`, "invocation panicked", "errorString", "kaboom", true},
		{`{"Mode":"error"}`, "invocation failed", "errorString", "plain failure", false},
		{`{}`, "invocation failed", "Function.ResponseSizeTooLarge", "response too large", false},
	}
	for _, tt := range tests {
		ctx, cancel := testContext(t)
		r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(tt.payload), TraceID: "Root=1-feed;Sampled=1", TenantID: "ten"})
		cancel()
		if err != nil || r.Err == nil {
			t.Fatalf("%s: %v %+v", tt.payload, err, r)
		}
		entries := logs.TakeAll()
		if len(entries) != 1 {
			t.Fatalf("%s: %d lines, want 1: %v", tt.payload, len(entries), entries)
		}
		e := entries[0]
		f := e.ContextMap()
		if e.Level != zapcore.ErrorLevel || e.Message != tt.msg || f["requestId"] != r.RequestID ||
			f["traceId"] != "1-feed" || f["tenantId"] != "ten" || f["errorType"] != tt.errorType ||
			!strings.HasPrefix(f["errorMessage"].(string), tt.errorMessage) {
			t.Errorf("%s: %s %q %v", tt.payload, e.Level, e.Message, f)
		}
		frames, _ := f["stackTrace"].([]any)
		if tt.stack != (len(frames) > 0) {
			t.Errorf("%s: stackTrace %v", tt.payload, f["stackTrace"])
		}
		if tt.stack {
			top, _ := frames[0].(map[string]any)
			if !strings.HasSuffix(top["path"].(string), "log_test.go") || top["line"] == 0 {
				t.Errorf("%s: top frame %v", tt.payload, top)
			}
		}
	}
}

// TestRuntimeLineJSON: a runtime line, encoded, has the shape of a
// handler's line.
func TestRuntimeLineJSON(t *testing.T) {
	rec := &recorder{}
	log := newLogger(limits.FormatJSON, limits.LevelInfo, rec)
	inv := &rapi.Invocation{RequestID: "req-x", TraceID: "Root=1-abc;Sampled=1"}
	logFailure(log, inv, "errorString", newPanicError("boom"))
	recs := rec.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d lines", len(recs))
	}
	m := recs[0]
	if m["level"] != "ERROR" || m["message"] != "invocation panicked" || m["requestId"] != "req-x" ||
		m["traceId"] != "1-abc" || m["errorMessage"] != "boom" || m["tenantId"] != nil {
		t.Fatalf("line %v", m)
	}
	if st, _ := m["stackTrace"].([]any); len(st) == 0 {
		t.Fatalf("no stack in %v", m)
	}
}

// TestErrorMessageOfBadError: an error whose Error panics is logged, not
// passed on.
func TestErrorMessageOfBadError(t *testing.T) {
	if got := errorMessage(badError{}); !strings.Contains(got, "panic in Error") {
		t.Fatalf("errorMessage = %q", got)
	}
}

type badError struct{}

func (badError) Error() string { panic("no message") }

// TestWorkerPoolInitializing: Run logs runtime_worker_pool_initializing
// once, at DEBUG, with workerCount (the slots, as other runtimes name it) and N.
func TestWorkerPoolInitializing(t *testing.T) {
	for _, level := range []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel} {
		api := newAPI(t, rapitest.Options{MaxConcurrency: 8, Queue: true})
		core, logs := observer.New(level)
		e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr(), "AWS_LAMBDA_MAX_CONCURRENCY": "8", "LMIGO_SLOTS": "6"}
		rt, err := New(func() error { return nil }, WithLookupEnv(e.lookup), WithLogger(zap.New(core)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		if err := api.WaitPolls(wctx, 6); err != nil {
			t.Fatal(err)
		}
		wcancel()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		events := logs.FilterMessage("runtime_worker_pool_initializing").All()
		if level > zapcore.DebugLevel {
			if len(events) != 0 {
				t.Fatalf("logged at %s: %v", level, events)
			}
			continue
		}
		if len(events) != 1 {
			t.Fatalf("%d events, want 1", len(events))
		}
		f := events[0].ContextMap()
		if events[0].Level != zapcore.DebugLevel || f["workerCount"] != int64(6) || f["executionEnvironmentMaxConcurrency"] != int64(8) {
			t.Fatalf("event %s %v", events[0].Level, f)
		}
	}
}

// TestLogStart: Run says once, at INFO, what it runs with, and warns of
// each LMIGO_ variable of the environment it does not know.
func TestLogStart(t *testing.T) {
	tests := []struct {
		name     string
		environ  []string // nil: WithLookupEnv alone, which lists no names
		memory   string
		wantWarn map[string]string // variable: nearest
		wantMem  int64
	}{
		{name: "lookup only", environ: nil, memory: "1024", wantMem: 1024 << 20 * 9 / 10},
		{name: "known names", environ: []string{"LMIGO_SLOTS=6", "HOME=/"}, memory: "", wantMem: 0},
		{name: "typos", environ: []string{"LMIGO_SLOT=6", "LMIGO_BUFER_RETAIN_BYTES=1MiB", "LMIGO_SLOTS=6"},
			memory: "2048", wantMem: 2048 << 20 * 9 / 10,
			wantWarn: map[string]string{"LMIGO_SLOT": "LMIGO_SLOTS", "LMIGO_BUFER_RETAIN_BYTES": "LMIGO_BUFFER_RETAIN_BYTES"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 8, Queue: true})
			core, logs := observer.New(zapcore.InfoLevel)
			e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr(), "AWS_LAMBDA_MAX_CONCURRENCY": "8", "LMIGO_SLOTS": "6",
				"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": tt.memory, "LMIGO_OVERRUN_GRACE": "2s"}
			opts := []Option{WithLookupEnv(e.lookup), WithLogger(zap.New(core)),
				withRuntime(func(rt *Runtime) { rt.setMemoryLimit = func(int64) int64 { return 0 } })}
			if tt.environ != nil {
				opts = append(opts, func(o *options) { o.environ = func() []string { return tt.environ } })
			}
			if tt.memory == "" {
				// The process's own limit is reported: none under go test.
				if debug.SetMemoryLimit(-1) != math.MaxInt64 {
					t.Skip("GOMEMLIMIT is set")
				}
			}
			rt, err := New(func() error { return nil }, opts...)
			if err != nil {
				t.Fatal(err)
			}
			stop, wait := runStoppable(t, api, rt, 6)
			stop()
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			starting := logs.FilterMessage("runtime starting").All()
			if len(starting) != 1 || starting[0].Level != zapcore.InfoLevel {
				t.Fatalf("runtime starting: %v", starting)
			}
			f := starting[0].ContextMap()
			if f["slots"] != int64(6) || f["maxConcurrency"] != int64(8) || f["bufferRetainBytes"] != int64(2<<20) ||
				f["memoryLimitBytes"] != tt.wantMem || f["overrunGrace"] != 2*time.Second {
				t.Errorf("runtime starting fields %v, want memoryLimitBytes %d", f, tt.wantMem)
			}
			got := map[string]string{}
			for _, w := range logs.FilterMessage("unknown variable ignored").All() {
				wf := w.ContextMap()
				if w.Level != zapcore.WarnLevel {
					t.Errorf("logged at %s", w.Level)
				}
				got[wf["variable"].(string)] = wf["nearest"].(string)
			}
			if len(got) != len(tt.wantWarn) || !maps.Equal(got, tt.wantWarn) {
				t.Errorf("warned of %v, want %v", got, tt.wantWarn)
			}
		})
	}
}

// TestLogAllocsDisabled: a line below the level allocates nothing: zap's
// Check idiom, a message without fields, Trace, and slog (with or without
// the context). zap's level methods with fields allocate their fields
// slice, which escapes into the core before the level is checked; that
// cost is logged, not gated.
func TestLogAllocsDisabled(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := testInvocation(&recorder{}, limits.LevelInfo, "req-1", "Root=1-abc", "")
	sl := slog.New(SlogHandler())
	bound := Slog(ctx)
	err := errors.New("e")
	tests := []struct {
		name string
		log  func()
	}{
		{"zap check", func() {
			if ce := Logger(ctx).Check(zap.DebugLevel, "m"); ce != nil {
				ce.Write(zap.String("k", "v"), zap.Int("n", 1), zap.Error(err))
			}
		}},
		{"zap debug without fields", func() { Logger(ctx).Debug("m") }},
		{"trace", func() { Trace(Logger(ctx), "m", zap.String("k", "v"), zap.Int("n", 1), zap.Error(err)) }},
		{"slog debug", func() { sl.DebugContext(ctx, "m", "k", "v", "n", 1) }},
		{"slog trace", func() { sl.Log(ctx, SlogLevelTrace, "m", "k", "v") }},
		{"bound slog debug", func() { bound.Debug("m", "k", "v", "n", 1) }},
		{"slog attrs", func() { sl.LogAttrs(ctx, slog.LevelDebug, "m", slog.String("k", "v"), slog.Int("n", 1)) }},
	}
	for _, tt := range tests {
		if a := testing.AllocsPerRun(1000, tt.log); a != 0 {
			t.Errorf("%s: %v allocations per disabled line, want 0", tt.name, a)
		}
	}
	a := testing.AllocsPerRun(1000, func() { Logger(ctx).Debug("m", zap.String("k", "v"), zap.Int("n", 1)) })
	t.Logf("zap Debug with fields, disabled: %v allocations (the fields slice)", a)
}

// discard is a log destination that keeps nothing.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Sync() error                 { return nil }

// BenchmarkLogLine: the cost of one line, written or filtered out, with
// three fields besides the invocation's IDs.
func BenchmarkLogLine(b *testing.B) {
	ctx := testInvocation(discard{}, limits.LevelInfo, "8f4ea0cf-6e4b-4d9a-9c0c-0f0b5c5a3e7e",
		"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1", "")
	sl := slog.New(SlogHandler())
	bound := Slog(ctx)
	benches := []struct {
		name string
		log  func()
	}{
		{"zap", func() {
			Logger(ctx).Info("order stored", zap.String("orderId", "o-123"), zap.Int("items", 3), zap.Duration("took", time.Millisecond))
		}},
		{"zap-disabled", func() {
			Logger(ctx).Debug("order stored", zap.String("orderId", "o-123"), zap.Int("items", 3), zap.Duration("took", time.Millisecond))
		}},
		{"slog-context", func() { sl.InfoContext(ctx, "order stored", "orderId", "o-123", "items", 3, "took", time.Millisecond) }},
		{"slog-bound", func() { bound.Info("order stored", "orderId", "o-123", "items", 3, "took", time.Millisecond) }},
		{"slog-disabled", func() { sl.DebugContext(ctx, "order stored", "orderId", "o-123", "items", 3, "took", time.Millisecond) }},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bb.log()
			}
		})
	}
}

// BenchmarkLoggerFirstUse: what an invocation pays for its logger, built on
// its first line.
func BenchmarkLoggerFirstUse(b *testing.B) {
	base := newLogger(limits.FormatJSON, limits.LevelInfo, discard{})
	lc := &lambdacontext.LambdaContext{AwsRequestID: "8f4ea0cf-6e4b-4d9a-9c0c-0f0b5c5a3e7e"}
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	b.ReportAllocs()
	for b.Loop() {
		ctx := newInvocationContext(context.Background(), lc, trace, base)
		_ = Logger(ctx)
	}
}

// BenchmarkLogParallel: enabled lines from every P at once, all through one
// locked writer.
func BenchmarkLogParallel(b *testing.B) {
	ctx := testInvocation(discard{}, limits.LevelInfo, "8f4ea0cf-6e4b-4d9a-9c0c-0f0b5c5a3e7e", "Root=1-abc", "")
	l := Logger(ctx)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Info("order stored", zap.String("orderId", "o-123"), zap.Int("items", 3))
		}
	})
}

// cutMarkRE is the mark a cut value or line ends with.
var cutMarkRE = regexp.MustCompile(`…\[cut [0-9]+ bytes\]`)

// bigText is n bytes of text that escaping makes grow unevenly (quotes,
// control bytes, HTML characters) and that has multi-byte characters for a
// cut to split.
func bigText(n int) string {
	const unit = `Grüße "quoted" <b>&</b> ` + "\x01\t日本語 — "
	s := strings.Repeat(unit, n/len(unit)+1)
	return errordoc.CutUTF8(s, n)
}

// checkBounded fails t for a line over maxLogLine, not valid UTF-8, not a
// JSON object (format JSON) or without the cut mark when wantCut.
func checkBounded(t *testing.T, format limits.Format, line string, wantCut bool) map[string]any {
	t.Helper()
	if len(line) > maxLogLine {
		t.Errorf("line of %d bytes, the bound is %d: %.200q", len(line), maxLogLine, line)
	}
	if !utf8.ValidString(line) {
		t.Errorf("line is not valid UTF-8: %.200q", line)
	}
	if wantCut && !cutMarkRE.MatchString(line) {
		t.Errorf("no cut mark in the line: %.200q ... %.200q", line, line[max(0, len(line)-200):])
	}
	if format == limits.FormatText {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Errorf("line is not a JSON object: %v: %.200q ... %.200q", err, line, line[max(0, len(line)-200):])
	}
	return m
}

// TestLongLinesBounded: a handler error of 1 MiB, a panic with a 1 MiB
// value, and a user's line with a 1 MiB field, in both formats: every line
// written is at most maxLogLine, valid JSON in the JSON format, and marked
// where cut; the /error posted carries the message whole as far as its
// 1 MiB allows.
func TestLongLinesBounded(t *testing.T) {
	fits := errordoc.CutUTF8(strings.Repeat("Grüße, 日本語 ", maxErrorBody/8), maxErrorBody-1<<10) // no escapes: its document fits
	huge := bigText(maxErrorBody)
	for _, format := range []limits.Format{limits.FormatJSON, limits.FormatText} {
		t.Run(format.String(), func(t *testing.T) {
			rec := &recorder{}
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			serve(t, api, env{}, func(ctx context.Context, ev struct{ Mode string }) (string, error) {
				switch ev.Mode {
				case "error":
					return "", errors.New(fits)
				case "huge error":
					return "", errors.New(huge)
				case "panic":
					panic(huge)
				case "zap":
					Logger(ctx).Info("user line", zap.String("blob", huge), zap.Int("after", 1))
				case "zap message":
					Logger(ctx).Warn(huge)
				case "slog":
					Slog(ctx).Info("slog line", "blob", huge, "after", 1)
				case "many":
					fs := make([]zap.Field, 0, 20000)
					for i := range 20000 {
						fs = append(fs, zap.Int(fmt.Sprintf("k%d", i), i))
					}
					Logger(ctx).Info("many fields", fs...)
				}
				return "ok", nil
			}, WithLogger(newLogger(format, limits.LevelInfo, rec)))
			tests := []struct {
				mode, message string
				wantErr       string // the /error's message; "" for a response
				whole         bool   // the message fits the /error whole
			}{
				{"error", "invocation failed", fits, true},
				{"huge error", "invocation failed", huge, false},
				{"panic", "invocation panicked", huge, false},
				{"zap", "user line", "", false},
				{"zap message", "", "", false},
				{"slog", "slog line", "", false},
				{"many", "many fields", "", false},
			}
			for _, tt := range tests {
				rec.lines(t)
				before := len(rec.lines(t))
				r := invoke(t, api, `{"Mode":"`+tt.mode+`"}`)
				if tt.wantErr == "" {
					if r.Err != nil || string(r.Body) != `"ok"` {
						t.Fatalf("%s: %+v", tt.mode, r)
					}
				} else {
					checkErrorDoc(t, tt.mode, r, tt.wantErr, tt.whole)
				}
				lines := rec.lines(t)[before:]
				if len(lines) != 1 {
					t.Fatalf("%s: %d lines", tt.mode, len(lines))
				}
				m := checkBounded(t, format, lines[0], true)
				if format == limits.FormatText {
					if !strings.Contains(lines[0], "\t"+tt.message) || !strings.HasSuffix(lines[0], "\n") {
						t.Errorf("%s: text line %.200q", tt.mode, lines[0])
					}
					continue
				}
				if m["requestId"] != r.RequestID || (tt.message != "" && m["message"] != tt.message) {
					t.Errorf("%s: requestId %v, message %.100v", tt.mode, m["requestId"], m["message"])
				}
				if tt.wantErr != "" && m["errorType"] != "errorString" && m["errorType"] != "string" {
					t.Errorf("%s: errorType %v", tt.mode, m["errorType"])
				}
			}
		})
	}
}

// checkErrorDoc checks the /error of r: at most 1 MiB, with the message
// want whole, or, when it cannot fit, the longest cut of it that does.
func checkErrorDoc(t *testing.T, mode string, r rapitest.Result, want string, whole bool) {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("%s: no error: %+v", mode, r)
	}
	var doc messages.InvokeResponse_Error
	if err := json.Unmarshal(r.Err.Body, &doc); err != nil {
		t.Fatalf("%s: error body: %v", mode, err)
	}
	if len(r.Err.Body) > maxErrorBody {
		t.Errorf("%s: error body of %d bytes", mode, len(r.Err.Body))
	}
	if whole {
		if doc.Message != want {
			t.Errorf("%s: the error message (%d bytes) is not the handler's (%d bytes)", mode, len(doc.Message), len(want))
		}
		return
	}
	cut, ok := strings.CutSuffix(doc.Message, "...")
	if !ok || !strings.HasPrefix(want, cut) || len(r.Err.Body) < maxErrorBody-64 {
		t.Errorf("%s: error message of %d bytes in a body of %d, not the longest cut of the handler's", mode, len(doc.Message), len(r.Err.Body))
	}
}

// TestLineBoundEdges: lines at the bound are written as they are; a cut
// never splits a character or an escape, in values of every kind.
func TestLineBoundEdges(t *testing.T) {
	rec := &recorder{}
	log := newLogger(limits.FormatJSON, limits.LevelInfo, rec)
	probe := func(n int) string {
		before := len(rec.lines(t))
		log.Info("m", zap.String("s", strings.Repeat("a", n)))
		return rec.lines(t)[before]
	}
	overhead := len(probe(0))
	exact := probe(maxLogLine - overhead)
	if len(exact) != maxLogLine || cutMarkRE.MatchString(exact) {
		t.Fatalf("a line of exactly the bound was changed: %d bytes", len(exact))
	}
	over := probe(maxLogLine - overhead + 1)
	checkBounded(t, limits.FormatJSON, over, true)

	for _, unit := range []string{"é", "日", "😀", "\x01", `"`, "<", "\u2028", "\xff"} {
		for shift := range 8 {
			before := len(rec.lines(t))
			s := strings.Repeat("x", shift) + strings.Repeat(unit, 2*maxLogLine/len(unit))
			log.Info("m", zap.String("s", s), zap.Strings("list", []string{s, s}),
				zap.Any("obj", map[string]string{"k": s}), zap.ByteString("b", []byte(s)))
			checkBounded(t, limits.FormatJSON, rec.lines(t)[before], true)
		}
	}
}

// TestBoundHoldsOutsideInvocations: the process logger (lines outside an
// invocation) and a runtime line about an invocation are bounded too.
func TestBoundHoldsOutsideInvocations(t *testing.T) {
	rec := &recorder{}
	log := newLogger(limits.FormatJSON, limits.LevelInfo, rec)
	logFailure(log, &rapi.Invocation{RequestID: "r"}, "errorString", newPanicError(bigText(3*maxLogLine)))
	ctx := newInvocationContext(context.Background(), &lambdacontext.LambdaContext{}, "", log)
	slog.New(SlogHandler()).InfoContext(ctx, bigText(2*maxLogLine), slog.Group("g", "v", bigText(2*maxLogLine)))
	for _, l := range rec.lines(t) {
		checkBounded(t, limits.FormatJSON, l, true)
	}
}

// TestUserLoggerBounded: with a logger given by WithLogger, what the
// runtime itself logs is bounded as its own logger's lines are, before
// the user's core sees it: a 1 MiB error message and a 1 MiB panic value
// come out in lines of at most maxLogLine, marked where cut, with their
// request ID, through a plain zap JSON core with no bound of its own.
func TestUserLoggerBounded(t *testing.T) {
	huge := bigText(maxErrorBody)
	rec := &recorder{}
	user := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(rec), zap.DebugLevel))
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{}, func(_ context.Context, ev struct{ Mode string }) (string, error) {
		if ev.Mode == "panic" {
			panic(errors.New(huge))
		}
		return "", errors.New(huge)
	}, WithLogger(user))
	tests := []struct{ mode, message string }{
		{"error", "invocation failed"},
		{"panic", "invocation panicked"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			before := len(rec.lines(t))
			r := invoke(t, api, `{"Mode":"`+tt.mode+`"}`)
			if r.Err == nil {
				t.Fatalf("%+v, want an error", r)
			}
			lines := rec.lines(t)[before:]
			if len(lines) != 1 {
				t.Fatalf("%d lines", len(lines))
			}
			m := checkBounded(t, limits.FormatJSON, lines[0], true)
			if m["msg"] != tt.message || m["requestId"] != r.RequestID {
				t.Errorf("msg %v, requestId %v; want %q, %s", m["msg"], m["requestId"], tt.message, r.RequestID)
			}
		})
	}
}

// verboseError is a pkg/errors-style error: its %+v adds a stack, which
// zap logs beside its message, as the field's Verbose.
type verboseError struct{ msg, stack string }

func (e verboseError) Error() string { return e.msg }

func (e verboseError) Format(s fmt.State, verb rune) {
	_, _ = io.WriteString(s, e.msg)
	if verb == 'v' && s.Flag('+') {
		_, _ = io.WriteString(s, "\n"+e.stack)
	}
}

// groupError is a multierr-style group, whose causes zap logs beside its
// message, each with its own Verbose.
type groupError []error

func (g groupError) Error() string   { return "several errors" }
func (g groupError) Errors() []error { return g }

// TestStopLineBounded: a stop cause with a verbose form, or a group of
// such causes, keeps the runtime stopped line, written through a
// WithLogger logger, within the bound and one JSON object, its verbose
// form cut where it must be, whatever fields zap derives from the error.
func TestStopLineBounded(t *testing.T) {
	stack := bigText(40 << 10)
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"verbose", verboseError{"stopped by its owner", stack}},
		{"group", groupError{verboseError{"one", stack}, verboseError{"two", stack}, errors.New(stack)}},
		{"wrapped group", fmt.Errorf("stopped: %w", groupError{verboseError{"one", stack}})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			user := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(rec), zap.DebugLevel))
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			rt, err := New(func(context.Context, struct{}) (string, error) { return "", nil },
				WithLookupEnv(api.Env(nil)), WithLogger(user))
			if err != nil {
				t.Fatal(err)
			}
			stopWithCause(t, api, rt, tt.err)
			var stopped []string
			for _, l := range rec.lines(t) {
				if strings.Contains(l, `"msg":"runtime stopped"`) {
					stopped = append(stopped, l)
				}
			}
			if len(stopped) != 1 {
				t.Fatalf("%d runtime stopped lines", len(stopped))
			}
			m := checkBounded(t, limits.FormatJSON, stopped[0], false)
			if m["cause"] != tt.err.Error() {
				t.Errorf("cause %q, want %q", m["cause"], tt.err.Error())
			}
			if v, _ := m["causeVerbose"].(string); tt.name == "verbose" && !strings.HasPrefix(v, "stopped by its owner\n") {
				t.Errorf("causeVerbose %.100q, want the start of the verbose form", v)
			}
		})
	}
}

// TestEventDecodeErrorNotLogged: an event that does not decode into the
// handler's type fails with aws-lambda-go's error body, which may quote
// the caller's value back; the runtime's log line names the field, the
// Go type and the kind of JSON value, never the value.
func TestEventDecodeErrorNotLogged(t *testing.T) {
	type event struct {
		N int32 `json:"n"`
		S struct {
			When time.Time `json:"when"`
		} `json:"s"`
	}
	handler := func(ctx context.Context, ev event) (string, error) { return "ok", nil }
	tests := []struct {
		payload, secret string
		logged          []string // in the errorMessage logged
		opts            []lambda.Option
	}{
		{`{"n": 4111111111111111}`, "4111111111111111", []string{"number", "event.n", "int32"}, nil},
		{`{"n": "4111111111111111"}`, "4111111111111111", []string{"string", "event.n", "int32"}, nil},
		{`{"s": {"when": "4111111111111111"}}`, "4111111111111111", []string{"ParseError"}, nil},
		{`{"n": 1, "s": {"when": 4111111111111111x}}`, "4111111111111111", []string{"offset"}, nil},
		{`{"n": 1, "k4111111111111111": 1}`, "4111111111111111", []string{"errorString"},
			[]lambda.Option{lambda.WithDisallowUnknownFields(true)}},
	}
	for _, tt := range tests {
		t.Run(tt.payload, func(t *testing.T) {
			rec := &recorder{}
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			opts := []Option{WithLogger(newLogger(limits.FormatJSON, limits.LevelInfo, rec))}
			if tt.opts != nil {
				opts = append(opts, WithDisallowUnknownFields(true))
			}
			serve(t, api, env{}, handler, opts...)
			before := len(rec.lines(t))
			r := invoke(t, api, tt.payload)
			_, wantErr := lambda.NewHandlerWithOptions(handler, tt.opts...).Invoke(context.Background(), []byte(tt.payload))
			if wantErr == nil {
				t.Fatal("aws-lambda-go decoded it")
			}
			wantBody, wantType := awsErrorBody(t, wantErr)
			if r.Err == nil || string(r.Err.Body) != string(wantBody) || r.Err.Type != wantType {
				t.Errorf("error %+v\nwant %s (%s)", r.Err, wantBody, wantType)
			}
			lines := rec.lines(t)[before:]
			if len(lines) != 1 {
				t.Fatalf("%d lines", len(lines))
			}
			m := checkBounded(t, limits.FormatJSON, lines[0], false)
			if quotesValue(m, tt.secret) {
				t.Errorf("the line quotes the value: %s", lines[0])
			}
			msg, _ := m["errorMessage"].(string)
			for _, w := range tt.logged {
				if !strings.Contains(msg, w) {
					t.Errorf("errorMessage %q does not name %q", msg, w)
				}
			}
			if m["errorType"] != wantType || m["message"] != "invocation failed" {
				t.Errorf("line %s", lines[0])
			}
		})
	}
}

// quotesValue reports whether a log line, but for its timestamp and request
// ID (which may hold any digits), holds six digits of secret.
func quotesValue(m map[string]any, secret string) bool {
	delete(m, "timestamp")
	delete(m, "requestId")
	b, _ := json.Marshal(m)
	return strings.Contains(string(b), secret[:6])
}

// TestWrappedJSONErrorNotLogged: an error that wraps encoding/json's
// account of a value (a raw handler's) is logged with the field and type,
// not the value; the /error keeps the message whole.
func TestWrappedJSONErrorNotLogged(t *testing.T) {
	rec := &recorder{}
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{}, RawHandler(func(ctx context.Context, payload []byte, out *Buffer) error {
		var v struct{ N uint8 }
		if err := json.Unmarshal(payload, &v); err != nil {
			return fmt.Errorf("not my event: %w", err)
		}
		return nil
	}), WithLogger(newLogger(limits.FormatJSON, limits.LevelInfo, rec)))
	before := len(rec.lines(t))
	r := invoke(t, api, `{"N": 4111111111111111}`)
	if r.Err == nil || !strings.Contains(string(r.Err.Body), "not my event: json: cannot unmarshal number 4111111111111111") {
		t.Fatalf("error %+v", r.Err)
	}
	lines := rec.lines(t)[before:]
	if len(lines) != 1 {
		t.Fatalf("%d lines", len(lines))
	}
	m := checkBounded(t, limits.FormatJSON, lines[0], false)
	msg, _ := m["errorMessage"].(string)
	if quotesValue(m, "4111111111111111") || !strings.HasPrefix(msg, "not my event: ") || !strings.Contains(msg, "uint8") {
		t.Fatalf("line %s", lines[0])
	}
}

// opaqueError wraps an error without repeating its message.
type opaqueError struct{ err error }

func (e opaqueError) Error() string { return "bad input" }
func (e opaqueError) Unwrap() error { return e.err }

// TestLogMessage: every encoding/json error in an error's tree is logged
// without its value: joined, wrapped, panicked, or hidden behind a message
// of its own; other errors are logged as they are.
func TestLogMessage(t *testing.T) {
	var n struct{ N int8 }
	typeErr := json.Unmarshal([]byte(`{"N": 4111111111111111}`), &n)
	syntaxErr := json.Unmarshal([]byte(`{"N": 4111111111111111x}`), &n)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("no JSON 4111111111111111"), "no JSON 4111111111111111"},
		{"joined", errors.Join(fmt.Errorf("a: %w", typeErr), fmt.Errorf("b: %w", syntaxErr)),
			"a: json: cannot unmarshal number into Go struct field .N of type int8\nb: json: syntax error at offset 23"},
		{"panicked", newPanicError(typeErr), "json: cannot unmarshal number into Go struct field .N of type int8"},
		{"own message", opaqueError{typeErr},
			"json: cannot unmarshal number into Go struct field .N of type int8 (the error's message is not logged: it may quote the caller's data)"},
		{"no type", &json.UnmarshalTypeError{Value: "4111111111111111"},
			"json: cannot unmarshal value (the error's message is not logged: it may quote the caller's data)"},
	}
	for _, tt := range tests {
		if got := logMessage(tt.err); got != tt.want {
			t.Errorf("%s: %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// TestLogDurationUnit: a duration field carries its unit, in Go's
// notation, in JSON and TEXT lines, from zap and from slog alike.
func TestLogDurationUnit(t *testing.T) {
	want := map[string]string{"backoff": "1.5s", "took": "312.5µs", "elapsed": "2m0s"}
	for _, format := range []limits.Format{limits.FormatJSON, limits.FormatText} {
		rec := &recorder{}
		ctx := newInvocationContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"}, "Root=1-abc",
			newLogger(format, limits.LevelInfo, rec))
		Logger(ctx).Info("waited", zap.Duration("backoff", 1500*time.Millisecond), zap.Duration("took", 312500*time.Nanosecond))
		slog.New(SlogHandler()).InfoContext(ctx, "waited", "elapsed", 2*time.Minute)
		lines := rec.lines(t)
		if len(lines) != 2 {
			t.Fatalf("%v: %d lines, want 2", format, len(lines))
		}
		for _, l := range lines {
			if format == limits.FormatText {
				for k, v := range want {
					if strings.Contains(l, `"`+k+`"`) && !strings.Contains(l, `"`+k+`": "`+v+`"`) {
						t.Errorf("TEXT line %q: want %s %q", l, k, v)
					}
				}
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("not JSON: %q", l)
			}
			for k, v := range want {
				if got, ok := m[k]; ok && got != v {
					t.Errorf("JSON line %q: %s is %v (%T), want %q", l, k, got, got, v)
				}
			}
		}
	}
}

// TestInitErrorLogFormat: the line that reports a failed init is in the
// format the environment asks for, even when another variable is bad.
func TestInitErrorLogFormat(t *testing.T) {
	tests := []struct {
		name string
		vars env
		json bool
	}{
		{"TEXT", env{"AWS_LAMBDA_LOG_FORMAT": "TEXT"}, false},
		{"text on LMI", env{"AWS_LAMBDA_LOG_FORMAT": "text", "AWS_LAMBDA_INITIALIZATION_TYPE": "lambda-managed-instances"}, false},
		{"JSON", env{"AWS_LAMBDA_LOG_FORMAT": "JSON"}, true},
		{"default", env{}, false},
		{"default on LMI", env{"AWS_LAMBDA_INITIALIZATION_TYPE": "lambda-managed-instances"}, true},
		{"bad format", env{"AWS_LAMBDA_LOG_FORMAT": "XML"}, false},
		{"bad format on LMI", env{"AWS_LAMBDA_LOG_FORMAT": "XML", "AWS_LAMBDA_INITIALIZATION_TYPE": "lambda-managed-instances"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{})
			e := env{"AWS_LAMBDA_RUNTIME_API": api.Addr(), "AWS_LAMBDA_MAX_CONCURRENCY": "lots"}
			for k, v := range tt.vars {
				e[k] = v
			}
			rec := &recorder{}
			if code := start(func() {}, WithLookupEnv(e.lookup), func(o *options) { o.stderr = rec }); code != 1 {
				t.Fatalf("exit status %d, want 1", code)
			}
			lines := rec.lines(t)
			if len(lines) != 1 || !strings.Contains(lines[0], "init failed") {
				t.Fatalf("lines %q, want the one of the failed init", lines)
			}
			if got := json.Valid([]byte(lines[0])); got != tt.json {
				t.Errorf("line %q: JSON %v, want %v", lines[0], got, tt.json)
			}
			if !tt.json && !strings.Contains(lines[0], "\tERROR\tinit failed\t") {
				t.Errorf("line %q is not a TEXT line", lines[0])
			}
		})
	}
}
