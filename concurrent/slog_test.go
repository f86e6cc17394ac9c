package concurrent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/limits"
	"go.uber.org/zap/zapcore"
)

// TestSlogHandlerConformance runs the standard library's handler tests on
// a handler bound to an invocation, with Lambda's keys mapped back to
// slog's.
func TestSlogHandlerConformance(t *testing.T) {
	var rec *recorder
	slogtest.Run(t, func(*testing.T) slog.Handler {
		rec = &recorder{}
		c := fromContext(testInvocation(rec, limits.LevelTrace, "req-1", "", ""))
		return &slogHandler{inv: c}
	}, func(t *testing.T) map[string]any {
		recs := rec.records(t)
		if len(recs) != 1 {
			t.Fatalf("%d lines, want 1", len(recs))
		}
		m := recs[0]
		if m["requestId"] != "req-1" {
			t.Errorf("requestId %v", m["requestId"])
		}
		delete(m, "requestId")
		for lambda, std := range map[string]string{"timestamp": slog.TimeKey, "message": slog.MessageKey, "level": slog.LevelKey} {
			if v, ok := m[lambda]; ok && lambda != std {
				m[std] = v
				delete(m, lambda)
			}
		}
		return m
	})
}

type logValuer struct{}

func (logValuer) LogValue() slog.Value { return slog.StringValue("resolved") }

type point struct{ X, Y int }

// TestSlogAttrs: each kind of slog value lands as the JSON value a reader
// expects, groups nest, and WithAttrs/WithGroup compose.
func TestSlogAttrs(t *testing.T) {
	when := time.Date(2025, 3, 4, 5, 6, 7, 8, time.FixedZone("x", 3600))
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want string // fmt of the line without timestamp, level, message, requestId
	}{
		{"kinds", func(l *slog.Logger) {
			l.Info("m", "s", "str", "i", -3, "u", uint64(7), "f", 1.5, "b", true,
				"d", 1500*time.Microsecond, "t", when, "v", logValuer{}, "e", errors.New("bad"),
				"p", point{1, 2}, "nil", nil)
		}, "map[b:true d:1.5ms e:bad f:1.5 i:-3 nil:<nil> p:map[X:1 Y:2] s:str t:2025-03-04T04:06:07.000000008Z u:7 v:resolved]"},
		{"group", func(l *slog.Logger) {
			l.Info("m", slog.Group("g", "a", 1, slog.Group("h", "b", 2)), "c", 3)
		}, "map[c:3 g:map[a:1 h:map[b:2]]]"},
		{"inline and empty groups", func(l *slog.Logger) {
			l.Info("m", slog.Group("", "a", 1), slog.Group("empty"), slog.Attr{}, "c", 3)
		}, "map[a:1 c:3]"},
		{"with attrs and group", func(l *slog.Logger) {
			l.With("a", 1).WithGroup("g").With("b", 2).WithGroup("h").Info("m", "c", 3)
		}, "map[a:1 g:map[b:2 h:map[c:3]]]"},
		{"open group without attrs", func(l *slog.Logger) {
			l.With("a", 1).WithGroup("g").WithGroup("h").Info("m")
		}, "map[a:1]"},
		{"with only empty attrs", func(l *slog.Logger) {
			l.WithGroup("g").With(slog.Attr{}).Info("m", "c", 3)
		}, "map[g:map[c:3]]"},
		{"empty group name", func(l *slog.Logger) {
			l.WithGroup("").Info("m", "c", 3)
		}, "map[c:3]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			tt.log(Slog(testInvocation(rec, limits.LevelInfo, "req-1", "", "")))
			recs := rec.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d lines", len(recs))
			}
			m := recs[0]
			for _, k := range []string{"timestamp", "level", "message", "requestId"} {
				if m[k] == nil {
					t.Errorf("no %s", k)
				}
				delete(m, k)
			}
			if got := fmt.Sprint(m); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestSlogIDsFromContext: one handler, many invocations: each call takes
// the IDs of the context it is given; a bound logger keeps its own.
func TestSlogIDsFromContext(t *testing.T) {
	rec := &recorder{}
	a := testInvocation(rec, limits.LevelInfo, "req-a", "Root=1-a", "ten-a")
	// The same base logger, as the runtime gives every invocation.
	b := newInvocationContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-b"}, "Root=1-b", fromContext(a).base)
	l := slog.New(SlogHandler()).With("shared", true)
	l.InfoContext(a, "one")
	l.InfoContext(b, "two")
	Slog(a).InfoContext(b, "three") // bound to a, whatever the context
	l.InfoContext(context.WithValue(b, otherKey{}, 0), "four")
	want := []string{"one req-a 1-a ten-a", "two req-b 1-b <nil>", "three req-a 1-a ten-a", "four req-b 1-b <nil>"}
	recs := rec.records(t)
	if len(recs) != len(want) {
		t.Fatalf("%d lines", len(recs))
	}
	for i, m := range recs {
		if got := fmt.Sprint(m["message"], " ", m["requestId"], " ", m["traceId"], " ", m["tenantId"]); got != want[i] {
			t.Errorf("line %d: %s, want %s", i, got, want[i])
		}
		if i != 2 && m["shared"] != true {
			t.Errorf("line %d lost the handler's attrs: %v", i, m)
		}
	}
}

func TestSlogLevels(t *testing.T) {
	tests := []struct {
		l    slog.Level
		want zapcore.Level
	}{
		{SlogLevelTrace - 10, LevelTrace}, {SlogLevelTrace, LevelTrace}, {slog.LevelDebug - 1, LevelTrace},
		{slog.LevelDebug, zapcore.DebugLevel}, {slog.LevelInfo - 1, zapcore.DebugLevel},
		{slog.LevelInfo, zapcore.InfoLevel}, {slog.LevelInfo + 2, zapcore.InfoLevel},
		{slog.LevelWarn, zapcore.WarnLevel}, {slog.LevelError, zapcore.ErrorLevel},
		{SlogLevelFatal - 1, zapcore.ErrorLevel}, {SlogLevelFatal, zapcore.FatalLevel}, {SlogLevelFatal + 100, zapcore.FatalLevel},
	}
	for _, tt := range tests {
		if got := zapLevelOfSlog(tt.l); got != tt.want {
			t.Errorf("%v: got %v, want %v", tt.l, got, tt.want)
		}
	}
}

// TestSlogOutsideInvocation: the handler writes a context without an
// invocation to the process logger, without IDs.
func TestSlogOutsideInvocation(t *testing.T) {
	h := SlogHandler()
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelError} {
		if h.Enabled(context.Background(), l) != defaultLogger().Core().Enabled(zapLevelOfSlog(l)) {
			t.Errorf("Enabled(%v) disagrees with the process logger", l)
		}
	}
	// A record below every level is dropped without touching stderr.
	if err := h.Handle(context.Background(), slog.NewRecord(time.Now(), SlogLevelTrace-100, "x", 0)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSlogAttrs: a line with a group and an error, the slower kinds.
func BenchmarkSlogAttrs(b *testing.B) {
	ctx := testInvocation(discard{}, limits.LevelInfo, "8f4ea0cf-6e4b-4d9a-9c0c-0f0b5c5a3e7e", "Root=1-abc", "")
	l := slog.New(SlogHandler()).With("service", "orders")
	err := errors.New("bad")
	b.ReportAllocs()
	for b.Loop() {
		l.InfoContext(ctx, "m", slog.Group("req", "path", "/x", "status", 200), "err", err)
	}
}
