package concurrent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
)

// TestLambdaOptionShape pins what lambda.Option applies to in
// aws-lambda-go v1.55.1: lambdaOptions reads these fields. A version that
// changes them fails here, loudly, before any function runs with options
// read wrong.
func TestLambdaOptionShape(t *testing.T) {
	want := []string{
		"handlerFunc lambda.handlerFunc (embedded)",
		"baseContext context.Context",
		"contextValues map[interface {}]interface {}",
		"jsonRequestUseNumber bool",
		"jsonRequestDisallowUnknownFields bool",
		"jsonResponseEscapeHTML bool",
		"jsonResponseIndentPrefix string",
		"jsonResponseIndentValue string",
		"enableSIGTERM bool",
		"sigtermCallbacks []func()",
		"jsonOutBufferPool *sync.Pool",
	}
	ot := reflect.TypeFor[lambda.Option]()
	if ot.Kind() != reflect.Func || ot.NumIn() != 1 || ot.NumOut() != 0 || ot.In(0).Kind() != reflect.Pointer {
		t.Fatalf("lambda.Option is %v, want func(*handlerOptions)", ot)
	}
	st := ot.In(0).Elem()
	var got []string
	for f := range st.Fields() {
		s := f.Name + " " + f.Type.String()
		if f.Anonymous {
			s += " (embedded)"
		}
		got = append(got, s)
	}
	if st.PkgPath() != awsLambdaPkg || st.Name() != "handlerOptions" || !slices.Equal(got, want) {
		t.Fatalf("lambda.Option applies to %s.%s {\n\t%s\n}\nwant the shape of v1.55.1 {\n\t%s\n}",
			st.PkgPath(), st.Name(), joinLines(got), joinLines(want))
	}
	if err := checkLambdaOptionShape(st); err != nil {
		t.Fatal(err)
	}
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for i, l := range s {
		if i > 0 {
			b.WriteString("\n\t")
		}
		b.WriteString(l)
	}
	return b.String()
}

type loKey string

// TestLambdaOptions checks that each of aws-lambda-go's options, read by
// lambdaOptions, sets what the runtime's own option of the same name sets,
// in the order given, as newHandler applies them; that reading them starts
// nothing (WithEnableSIGTERM's registration is the runtime's to do); and
// that a nil option is an error, not a crash.
func TestLambdaOptions(t *testing.T) {
	base := context.WithValue(context.Background(), loKey("base"), "b")
	var calls []string
	hook := func(name string) func() { return func() { calls = append(calls, name) } }
	tests := []struct {
		name   string
		lambda []lambda.Option
		want   []Option
	}{
		{"none", nil, nil},
		{"WithContext", []lambda.Option{lambda.WithContext(base)}, []Option{WithContext(base)}},
		{"WithContextValue", []lambda.Option{lambda.WithContextValue(loKey("k"), 1), lambda.WithContextValue(loKey("k"), 2),
			lambda.WithContextValue(loKey("j"), 3)}, []Option{WithContextValue(loKey("k"), 2), WithContextValue(loKey("j"), 3)}},
		{"values on the base whatever the order", []lambda.Option{lambda.WithContextValue(loKey("k"), 1), lambda.WithContext(base)},
			[]Option{WithContext(base), WithContextValue(loKey("k"), 1)}},
		{"WithSetEscapeHTML", []lambda.Option{lambda.WithSetEscapeHTML(true)}, []Option{WithSetEscapeHTML(true)}},
		{"WithSetEscapeHTML, last wins", []lambda.Option{lambda.WithSetEscapeHTML(true), lambda.WithSetEscapeHTML(false)}, nil},
		{"WithSetIndent", []lambda.Option{lambda.WithSetIndent(">>", "  ")}, []Option{WithSetIndent(">>", "  ")}},
		{"WithUseNumber", []lambda.Option{lambda.WithUseNumber(true)}, []Option{WithUseNumber(true)}},
		{"WithDisallowUnknownFields", []lambda.Option{lambda.WithDisallowUnknownFields(true)}, []Option{WithDisallowUnknownFields(true)}},
		{"WithEnableSIGTERM", []lambda.Option{lambda.WithEnableSIGTERM()}, []Option{WithSIGTERM()}},
		{"WithEnableSIGTERM, callbacks in order", []lambda.Option{lambda.WithEnableSIGTERM(hook("a")), lambda.WithEnableSIGTERM(hook("b"), hook("c"))},
			[]Option{WithSIGTERM(hook("a"), hook("b"), hook("c"))}},
		{"all", []lambda.Option{lambda.WithSetIndent("", "\t"), lambda.WithUseNumber(true), lambda.WithDisallowUnknownFields(true),
			lambda.WithSetEscapeHTML(true), lambda.WithContext(base), lambda.WithEnableSIGTERM(hook("a"))},
			[]Option{WithSetIndent("", "\t"), WithUseNumber(true), WithDisallowUnknownFields(true), WithSetEscapeHTML(true),
				WithContext(base), WithSIGTERM(hook("a"))}},
	}
	var logged bytes.Buffer
	log.SetOutput(&logged) // aws-lambda-go's enableSIGTERM logs when it runs
	defer log.SetOutput(os.Stderr)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt, err := lambdaOptions(tt.lambda)
			if err != nil {
				t.Fatal(err)
			}
			got, want := newOptions([]Option{opt}), newOptions(tt.want)
			if got.baseCtx != want.baseCtx || !reflect.DeepEqual(got.handler, want.handler) || got.sigterm != want.sigterm {
				t.Fatalf("got %+v %+v sigterm %v, want %+v %+v sigterm %v",
					got.baseCtx, got.handler, got.sigterm, want.baseCtx, want.handler, want.sigterm)
			}
			if !sameValues(got.values, want.values) {
				t.Fatalf("context values %v, want %v", got.values, want.values)
			}
			calls = nil
			for _, h := range got.hooks {
				h()
			}
			gotCalls := calls
			calls = nil
			for _, h := range want.hooks {
				h()
			}
			if !slices.Equal(gotCalls, calls) {
				t.Fatalf("hooks ran %v, want %v", gotCalls, calls)
			}
		})
	}
	if logged.Len() > 0 {
		t.Fatalf("reading the options ran aws-lambda-go's code: %s", logged.String())
	}

	if _, err := lambdaOptions([]lambda.Option{lambda.WithUseNumber(true), nil}); !errors.Is(err, ErrConfig) {
		t.Fatalf("a nil option: %v, want ErrConfig", err)
	}
}

// sameValues: the same keys with the same values, in any order (aws-lambda-go
// keeps them in a map).
func sameValues(a, b []ctxValue) bool {
	m := map[any]any{}
	for _, v := range a {
		m[v.key] = v.val
	}
	n := map[any]any{}
	for _, v := range b {
		n[v.key] = v.val
	}
	return fmt.Sprint(m) == fmt.Sprint(n) && len(m) == len(n)
}

// TestWithLambdaOptionsUnreadable checks that an option this runtime cannot
// read fails New with ErrConfig and names it, as it fails init.
func TestWithLambdaOptionsUnreadable(t *testing.T) {
	h := func(context.Context, []byte) ([]byte, error) { return nil, nil }
	lookup := func(k string) (string, bool) {
		if k == "AWS_LAMBDA_RUNTIME_API" {
			return "127.0.0.1:9001", true
		}
		return "", false
	}
	_, err := New(h, WithLookupEnv(lookup), WithLambdaOptions(lambda.WithUseNumber(true), nil))
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "lambda.Option 1 is nil") {
		t.Fatalf("New: %v, want ErrConfig naming lambda.Option 1", err)
	}
	if _, err := New(h, WithLookupEnv(lookup), WithLambdaOptions(lambda.WithUseNumber(true))); err != nil {
		t.Fatalf("New with a readable option: %v", err)
	}
}
