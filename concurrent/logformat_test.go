package concurrent

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
)

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
