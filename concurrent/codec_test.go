package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/concurrent/codec"
	"github.com/lmigo/lmigo/concurrent/codec/goccy"
	"github.com/lmigo/lmigo/concurrent/codec/jsonv2"
	"github.com/lmigo/lmigo/concurrent/codec/segmentio"
	"github.com/lmigo/lmigo/concurrent/codec/sonic"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

// altCodecs are the codec packages, all linked into this test binary.
var altCodecs = []string{jsonv2.Name, goccy.Name, sonic.Name, segmentio.Name}

func mustCodec(t testing.TB, name string, cfg handlerConfig) codec.Codec {
	t.Helper()
	c, err := resolveCodec("", name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolveCodec(t *testing.T) {
	if c, err := resolveCodec("", "", handlerConfig{}); c != nil || err != nil {
		t.Errorf("default: %v, %v; want the built-in codec", c, err)
	}
	if c, err := resolveCodec("std", sonic.Name, handlerConfig{}); c != nil || err != nil {
		t.Errorf("LMIGO_JSON_CODEC=std over WithCodec: %v, %v; want the built-in codec", c, err)
	}
	if c, err := resolveCodec(goccy.Name, "std", handlerConfig{}); err != nil || c == nil {
		t.Errorf("LMIGO_JSON_CODEC=goccy over WithCodec(std): %v, %v", c, err)
	}
	// Each codec refuses what it cannot do, naming the option.
	for name, cfg := range map[string]handlerConfig{
		jsonv2.Name:    {useNumber: true},
		segmentio.Name: {indent: "  "},
	} {
		if _, err := resolveCodec("", name, cfg); err == nil || !strings.Contains(err.Error(), "does not support") {
			t.Errorf("%s with %+v: %v, want an unsupported option", name, cfg, err)
		}
	}
}

// TestCodecNotLinked: a codec the binary does not contain fails New with
// ErrConfig, naming the variable and the import that links it.
func TestCodecNotLinked(t *testing.T) {
	lookupCodec = func(string) (codec.Factory, bool) { return nil, false }
	linkedCodecs = func() []string { return nil }
	defer func() { lookupCodec, linkedCodecs = codec.Lookup, codec.Linked }()
	env := map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "LMIGO_JSON_CODEC": "Sonic"}
	_, err := New(func(context.Context, lambdaevents.S3Event) error { return nil },
		WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
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
	}))
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `WithCodec("goccy")`) {
		t.Errorf("WithCodec(goccy) unlinked: %v", err)
	}
}

// TestCodecRoundTrip: every codec decodes every event as encoding/json
// does, and its response, read back by encoding/json, is the default
// codec's.
func TestCodecRoundTrip(t *testing.T) {
	for _, ev := range events.All() {
		std, err := newHandler(ev.Handler, handlerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		want := new(Buffer)
		if _, err := std.call(t.Context(), ev.Payload, want); err != nil {
			t.Fatalf("%s: %v", ev.Name, err)
		}
		for _, name := range altCodecs {
			t.Run(ev.Name+"/"+name, func(t *testing.T) {
				c := mustCodec(t, name, handlerConfig{})
				in := reflect.TypeOf(ev.Handler).In(1)
				wantEv, gotEv := reflect.New(in), reflect.New(in)
				if err := json.Unmarshal(ev.Payload, wantEv.Interface()); err != nil {
					t.Fatal(err)
				}
				if err := c.Decode(ev.Payload, gotEv.Interface()); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if !reflect.DeepEqual(gotEv.Interface(), wantEv.Interface()) {
					t.Errorf("decoded event differs from encoding/json's")
				}
				h, err := newHandler(ev.Handler, handlerConfig{codec: c})
				if err != nil {
					t.Fatal(err)
				}
				got := new(Buffer)
				if _, err := h.call(t.Context(), bytes.Clone(ev.Payload), got); err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, got.B, want.B) {
					t.Errorf("response\n got %s\nwant %s", got.B, want.B)
				}
				// Nothing decoded may alias the payload, which is reused.
				p := bytes.Clone(ev.Payload)
				if err := c.Decode(p, gotEv.Interface()); err != nil {
					t.Fatal(err)
				}
				for i := range p {
					p[i] = 'x'
				}
				if !reflect.DeepEqual(gotEv.Interface(), wantEv.Interface()) {
					t.Errorf("the decoded event changed with the payload buffer: it aliases it")
				}
			})
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Errorf("invalid JSON %q: %v", a, err)
		return false
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Errorf("invalid JSON %q: %v", b, err)
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// TestEventAllocs: on every event, the default codec allocates less than
// aws-lambda-go for the same handler, and every other codec less than the
// default (BenchmarkEvent has the figures).
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
		for _, name := range altCodecs {
			if n := allocs(name); n >= std {
				t.Errorf("%s: %s allocates %v per invocation, std %v", ev.Name, name, n, std)
			}
		}
	}
}

type panicsOnZero struct{ P *int }

func (v panicsOnZero) MarshalJSON() ([]byte, error) { return []byte{byte('0' + *v.P)}, nil }

// TestPrepareSurvivesMethods: preparing a codec runs the result type's
// MarshalJSON on a zero value; a panic there must not fail New.
func TestPrepareSurvivesMethods(t *testing.T) {
	f := func() (panicsOnZero, error) { n := 7; return panicsOnZero{&n}, nil }
	for _, name := range altCodecs {
		h, err := newHandler(f, handlerConfig{codec: mustCodec(t, name, handlerConfig{})})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := new(Buffer)
		if _, err := h.call(t.Context(), []byte(`{}`), out); err != nil || string(out.B) != "7" {
			t.Errorf("%s: %q, %v; want 7", name, out.B, err)
		}
	}
}
