package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// cutMarkRE is the mark a cut value or line ends with.
var cutMarkRE = regexp.MustCompile(`…\[cut [0-9]+ bytes\]`)

// bigText is n bytes of text that escaping makes grow unevenly (quotes,
// control bytes, HTML characters) and that has multi-byte characters for a
// cut to split.
func bigText(n int) string {
	const unit = `Grüße "quoted" <b>&</b> ` + "\x01\t日本語 — "
	s := strings.Repeat(unit, n/len(unit)+1)
	return cutUTF8(s, n)
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
	fits := cutUTF8(strings.Repeat("Grüße, 日本語 ", maxErrorBody/8), maxErrorBody-1<<10) // no escapes: its document fits
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
