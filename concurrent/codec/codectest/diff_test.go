package codectest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/concurrent"
)

var printCodecDiffs = flag.Bool("codec-diffs", false, "print every codec's output for each probe of TestCodecDifferences")

type diffEvent struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

type diffMarshaler struct{}

func (diffMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{ "spaced" : [1, 2] }`), nil }

type codecProbe struct {
	name    string
	handler any
	payload string
	opts    []concurrent.Option
}

// codecProbes are the places where JSON libraries are known to part ways,
// each a handler and a payload; README (JSON codecs) tabulates the result.
var codecProbes = []codecProbe{
	{"HTML characters", func() (string, error) { return "<a href=x>&</a>", nil }, `{}`, nil},
	{"HTML characters, WithSetEscapeHTML(true)", func() (string, error) { return "<a&b>", nil }, `{}`, []concurrent.Option{concurrent.WithSetEscapeHTML(true)}},
	{"U+2028 and U+2029", func() (string, error) { return "a\u2028b\u2029", nil }, `{}`, nil},
	{"invalid UTF-8 in a result", func() (string, error) { return "a\xffb", nil }, `{}`, nil},
	{"control characters", func() (string, error) { return "\x00\x1f\x7f", nil }, `{}`, nil},
	{"floats", func() ([]float64, error) {
		return []float64{1e21, 1e20, 1e-7, 0.1 + 0.2, 100, math.Copysign(0, -1)}, nil
	}, `{}`, nil},
	{"float32", func() (float32, error) { return 3.14, nil }, `{}`, nil},
	{"NaN", func() (float64, error) { return math.NaN(), nil }, `{}`, nil},
	{"nil slice and map", func() (struct {
		S []int
		M map[string]int
	}, error) {
		return struct {
			S []int
			M map[string]int
		}{}, nil
	}, `{}`, nil},
	{"map key order", func() (map[string]int, error) { return map[string]int{"b": 1, "a": 2, "é": 3, "A": 4, "a1": 5}, nil }, `{}`, nil},
	{"int map keys", func() (map[int]int, error) { return map[int]int{10: 1, 9: 2, -1: 3}, nil }, `{}`, nil},
	{"[]byte", func() ([]byte, error) { return []byte("\x00bin<>"), nil }, `{}`, nil},
	{"time.Time", func() (time.Time, error) {
		return time.Date(2026, 11, 29, 14, 21, 43, 512000000, time.FixedZone("", 3600)), nil
	}, `{}`, nil},
	{"RawMessage field with spaces", func() (struct{ R json.RawMessage }, error) {
		return struct{ R json.RawMessage }{json.RawMessage(`{ "a" : 1 }`)}, nil
	}, `{}`, nil},
	{"MarshalJSON with spaces", func() (diffMarshaler, error) { return diffMarshaler{}, nil }, `{}`, nil},
	{"indent", func() (map[string]int, error) { return map[string]int{"a": 1}, nil }, `{}`, []concurrent.Option{concurrent.WithSetIndent("", "  ")}},
	{"event: trailing data", func(e diffEvent) (diffEvent, error) { return e, nil }, `{"n":1} {"n":2}`, nil},
	{"event: field name case", func(e diffEvent) (diffEvent, error) { return e, nil }, `{"NAME":"x","N":2}`, nil},
	{"event: duplicate names", func(e diffEvent) (diffEvent, error) { return e, nil }, `{"n":1,"n":2}`, nil},
	{"event: invalid UTF-8", func(e diffEvent) (diffEvent, error) { return e, nil }, "{\"name\":\"a\xffb\"}", nil},
	{"event: syntax error", func(e diffEvent) (diffEvent, error) { return e, nil }, `{"n":1,}`, nil},
	{"event: truncated", func(e diffEvent) (diffEvent, error) { return e, nil }, `{"n":1`, nil},
	{"event: wrong type", func(e diffEvent) (diffEvent, error) { return e, nil }, `{"n":"1"}`, nil},
	{"event: unknown field, DisallowUnknownFields", func(e diffEvent) (diffEvent, error) { return e, nil }, `{"n":1,"x":2}`, []concurrent.Option{concurrent.WithDisallowUnknownFields(true)}},
	{"event: big integer into any", func(v any) (any, error) { return v, nil }, `[12345678901234567890, 1.0, 1e2]`, nil},
	{"event: UseNumber", func(v any) (any, error) { return v, nil }, `[12345678901234567890, 1.0]`, []concurrent.Option{concurrent.WithUseNumber(true)}},
	{"event: escaped surrogate", func(s string) (string, error) { return s, nil }, `"\ud800 \ud83d\ude00"`, nil},
}

// wantCodecDiffs lists, per codec, the probes whose output (or error body)
// is not byte for byte the default codec's; docs/codecs.md's table says how.
var wantCodecDiffs = map[string][]string{
	"jsonv2": {"U+2028 and U+2029", "invalid UTF-8 in a result", "NaN", "event: trailing data", "event: field name case",
		"event: syntax error", "event: truncated", "event: wrong type", "event: unknown field, DisallowUnknownFields"},
	"goccy": {"event: trailing data", "event: truncated"},
	"sonic": {"U+2028 and U+2029", "NaN", "RawMessage field with spaces", "MarshalJSON with spaces",
		"event: trailing data", "event: syntax error", "event: truncated", "event: wrong type"},
	"segmentio": {"RawMessage field with spaces", "MarshalJSON with spaces",
		"event: syntax error", "event: truncated", "event: wrong type"},
}

func probeIndex(name string) int {
	return slices.IndexFunc(codecProbes, func(p codecProbe) bool { return p.name == name })
}

// probeOutput is what the runtime would answer: the response, or the
// error body it would post.
func probeOutput(h lambda.Handler, payload string) string {
	b, err := h.Invoke(context.Background(), []byte(payload))
	if err != nil {
		return "error " + errorBody(err)
	}
	return string(b)
}

// errorBody is the body the runtime posts for a handler error
// (concurrent's errorbody.go): its message, and its type named as Lambda
// names it, by the type a pointer points to.
func errorBody(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	b, _ := json.Marshal(messages.InvokeResponse_Error{Message: err.Error(), Type: t.Name()}) // strings: it cannot fail
	return string(b)
}

// wantCodecDiffsArm64 are the further differences of the arm64 builds
// (found under qemu-user): sonic's arm64 code writes -0 as 0.
var wantCodecDiffsArm64 = map[string][]string{
	"sonic": {"floats"},
}

// TestCodecDifferences runs each probe through every codec and checks
// that exactly the documented probes differ from the default codec.
func TestCodecDifferences(t *testing.T) {
	for _, name := range altCodecs {
		var differ []string
		for _, p := range codecProbes {
			std, err := buildHandler(p.handler, p.opts...)
			if err != nil {
				t.Fatal(err)
			}
			want := probeOutput(std, p.payload)
			h, err := buildHandler(p.handler, append(slices.Clip(p.opts), concurrent.WithCodec(name))...)
			if err != nil {
				if *printCodecDiffs {
					fmt.Printf("%-10s %-45s unsupported: %v\n", name, p.name, err)
				}
				continue
			}
			got := probeOutput(h, p.payload)
			if got != want {
				differ = append(differ, p.name)
				if *printCodecDiffs {
					fmt.Printf("%-10s %-45s std %s\n%-56s got %s\n", name, p.name, want, "", got)
				}
			}
		}
		w := wantCodecDiffs[name]
		if runtime.GOARCH == "arm64" {
			w = slices.Concat(w, wantCodecDiffsArm64[name])
			slices.SortStableFunc(w, func(a, b string) int { return probeIndex(a) - probeIndex(b) })
		}
		if !slices.Equal(differ, w) {
			t.Errorf("%s differs from the default codec on\n%s\nwant\n%s", name, strings.Join(differ, "\n"), strings.Join(w, "\n"))
		}
	}
}
