package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

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
