package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/concurrent/codec"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

// The codec packages are tested in their own module (codec/codectest);
// here a fake codec stands in for them, so that this module links no JSON
// library but encoding/json.
const (
	fakeCodec = "fake"
	// fakeStrictCodec refuses WithUseNumber, as a codec that lacks an
	// option does.
	fakeStrictCodec = "fake-strict"
)

// fakeOptions is the last codec.Options a fake factory was built with.
var fakeOptions codec.Options

func init() {
	codec.Register(fakeCodec, func(o codec.Options) (codec.Codec, error) {
		fakeOptions = o
		return stdJSON{}, nil
	})
	codec.Register(fakeStrictCodec, func(o codec.Options) (codec.Codec, error) {
		if o.UseNumber {
			return nil, codec.Unsupported(fakeStrictCodec, "WithUseNumber")
		}
		return stdJSON{}, nil
	})
}

// stdJSON is a codec on encoding/json's plain functions. Append copies
// json.Marshal's result: one allocation more than the built-in codec.
type stdJSON struct{}

func (stdJSON) Decode(data []byte, v any) error { return json.Unmarshal(data, v) }

func (stdJSON) Append(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

func (c stdJSON) Prepare(t reflect.Type) { codec.Warm(c, t) }

func mustCodec(t testing.TB, name string, cfg handlerConfig) codec.Codec {
	t.Helper()
	c, err := resolveCodec(defaultOptions().codecs, "", name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolveCodec(t *testing.T) {
	if c, err := resolveCodec(defaultOptions().codecs, "", "", handlerConfig{}); c != nil || err != nil {
		t.Errorf("default: %v, %v; want the built-in codec", c, err)
	}
	if c, err := resolveCodec(defaultOptions().codecs, "std", fakeCodec, handlerConfig{}); c != nil || err != nil {
		t.Errorf("LMIGO_JSON_CODEC=std over WithCodec: %v, %v; want the built-in codec", c, err)
	}
	if c, err := resolveCodec(defaultOptions().codecs, fakeCodec, "std", handlerConfig{}); err != nil || c == nil {
		t.Errorf("LMIGO_JSON_CODEC=fake over WithCodec(std): %v, %v", c, err)
	}
	// The JSON options reach the factory.
	cfg := handlerConfig{escapeHTML: true, indentPrefix: ">", indent: "\t", useNumber: true, disallowUnknownFields: true}
	mustCodec(t, fakeCodec, cfg)
	if want := (codec.Options{EscapeHTML: true, Prefix: ">", Indent: "\t", UseNumber: true, DisallowUnknownFields: true}); fakeOptions != want {
		t.Errorf("factory got %+v, want %+v", fakeOptions, want)
	}
	// A factory's refusal names the source and the option.
	_, err := resolveCodec(defaultOptions().codecs, "", fakeStrictCodec, handlerConfig{useNumber: true})
	if err == nil || !strings.Contains(err.Error(), `WithCodec("fake-strict"): codec fake-strict does not support WithUseNumber`) {
		t.Errorf("refused option: %v", err)
	}
}

// TestCodecNotLinked: a codec the binary does not contain fails New with
// ErrConfig, naming the variable and the import that links it.
func TestCodecNotLinked(t *testing.T) {
	t.Parallel()
	none := func(o *options) {
		o.codecs = registry{lookup: func(string) (codec.Factory, bool) { return nil, false }, linked: func() []string { return nil }}
	}
	env := map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "LMIGO_JSON_CODEC": "Sonic"}
	_, err := New(func(context.Context, lambdaevents.S3Event) error { return nil },
		WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }), none)
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("New: %v, want ErrConfig", err)
	}
	for _, want := range []string{"LMIGO_JSON_CODEC=sonic", `does not contain the JSON codec "sonic"`,
		`import _ "github.com/lmigo/lmigo/concurrent/codec/sonic"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = New(func() {}, WithCodec("goccy"), WithLookupEnv(func(k string) (string, bool) {
		return "127.0.0.1:9001", k == "AWS_LAMBDA_RUNTIME_API"
	}), none)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `WithCodec("goccy")`) {
		t.Errorf("WithCodec(goccy) unlinked: %v", err)
	}
}

// TestEventAllocs: on every event, the default codec allocates less than
// aws-lambda-go for the same handler, and a codec costs the adapter no
// allocation of its own: the fake one allocates exactly its copy more than
// the default (codectest compares the real codecs).
func TestEventAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	for _, ev := range events.All() {
		allocs := func(name string) float64 {
			h, err := newHandler(ev.Handler, handlerConfig{codec: mustCodec(t, name, handlerConfig{})})
			if err != nil {
				t.Fatal(err)
			}
			out := new(Buffer)
			return testing.AllocsPerRun(50, func() {
				out.Reset()
				if _, err := h.call(ctx, ev.Payload, out); err != nil {
					t.Fatal(err)
				}
			})
		}
		aws := lambda.NewHandler(ev.Handler)
		awsAllocs := testing.AllocsPerRun(50, func() { _, _ = aws.Invoke(ctx, ev.Payload) })
		std := allocs(stdCodec)
		if std >= awsAllocs {
			t.Errorf("%s: std allocates %v per invocation, aws-lambda-go %v", ev.Name, std, awsAllocs)
		}
		if n := allocs(fakeCodec); n != std+1 {
			t.Errorf("%s: the fake codec allocates %v per invocation, std %v; want std+1", ev.Name, n, std)
		}
	}
}

type panicsOnZero struct{ P *int }

func (v panicsOnZero) MarshalJSON() ([]byte, error) { return []byte{byte('0' + *v.P)}, nil }

// TestPrepareSurvivesMethods: preparing a codec runs the result type's
// MarshalJSON on a zero value; a panic there must not fail New.
func TestPrepareSurvivesMethods(t *testing.T) {
	f := func() (panicsOnZero, error) { n := 7; return panicsOnZero{&n}, nil }
	h, err := newHandler(f, handlerConfig{codec: mustCodec(t, fakeCodec, handlerConfig{})})
	if err != nil {
		t.Fatal(err)
	}
	out := new(Buffer)
	if _, err := h.call(t.Context(), []byte(`{}`), out); err != nil || string(out.B) != "7" {
		t.Errorf("%q, %v; want 7", out.B, err)
	}
}
