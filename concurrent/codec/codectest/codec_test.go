package codectest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/codec"
	"github.com/lmigo/lmigo/concurrent/codec/goccy"
	"github.com/lmigo/lmigo/concurrent/codec/jsonv2"
	"github.com/lmigo/lmigo/concurrent/codec/segmentio"
	"github.com/lmigo/lmigo/concurrent/codec/sonic"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

// altCodecs are the codec packages, all linked into this test binary.
var altCodecs = []string{jsonv2.Name, goccy.Name, sonic.Name, segmentio.Name}

// stdCodec is the name of the built-in codec.
const stdCodec = "std"

func mustHandler(t testing.TB, f any, opts ...concurrent.Option) lambda.Handler {
	t.Helper()
	h, err := buildHandler(f, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// buildHandler is concurrent.NewHandler with the error that building it
// met, which concurrent.New reports at once (Invoke would report it on
// every call). New does not dial: the address is never used.
func buildHandler(f any, opts ...concurrent.Option) (lambda.Handler, error) {
	h := concurrent.NewHandler(f, opts...)
	_, err := concurrent.New(h, concurrent.WithLookupEnv(func(k string) (string, bool) {
		return "127.0.0.1:9", k == "AWS_LAMBDA_RUNTIME_API"
	}))
	return h, err
}

// mustCodec builds a codec from the registry, to decode with it directly.
func mustCodec(t testing.TB, name string) codec.Codec {
	t.Helper()
	f, ok := codec.Lookup(name)
	if !ok {
		t.Fatalf("codec %q is not linked", name)
	}
	c, err := f(codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCodecsLinked(t *testing.T) {
	want := slices.Sorted(slices.Values(altCodecs))
	if got := codec.Linked(); !slices.Equal(got, want) {
		t.Errorf("codec.Linked() = %v, want %v", got, want)
	}
}

// TestCodecRefusals: each codec refuses what it cannot do, naming the
// option, and NewHandler fails with ErrConfig rather than an invocation.
func TestCodecRefusals(t *testing.T) {
	f := func(any) (any, error) { return nil, nil }
	tests := []struct {
		codec string
		opt   concurrent.Option
	}{
		{jsonv2.Name, concurrent.WithUseNumber(true)},
		{jsonv2.Name, concurrent.WithSetIndent("", "-")},
		{segmentio.Name, concurrent.WithSetIndent("", "  ")},
	}
	for _, tt := range tests {
		_, err := buildHandler(f, concurrent.WithCodec(tt.codec), tt.opt)
		if !errors.Is(err, concurrent.ErrConfig) || !strings.Contains(err.Error(), "does not support") {
			t.Errorf("%s: %v, want ErrConfig for an unsupported option", tt.codec, err)
		}
	}
	// The names are matched without regard to case or spaces.
	for _, name := range []string{stdCodec, " Sonic ", "GOCCY"} {
		if _, err := buildHandler(f, concurrent.WithCodec(name)); err != nil {
			t.Errorf("WithCodec(%q): %v", name, err)
		}
	}
}

// TestCodecRoundTrip: every codec decodes every event as encoding/json
// does, and its response, read back by encoding/json, is the default
// codec's.
func TestCodecRoundTrip(t *testing.T) {
	for _, ev := range events.All() {
		want, err := mustHandler(t, ev.Handler).Invoke(t.Context(), ev.Payload)
		if err != nil {
			t.Fatalf("%s: %v", ev.Name, err)
		}
		for _, name := range altCodecs {
			t.Run(ev.Name+"/"+name, func(t *testing.T) {
				c := mustCodec(t, name)
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
				got, err := mustHandler(t, ev.Handler, concurrent.WithCodec(name)).Invoke(t.Context(), bytes.Clone(ev.Payload))
				if err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, got, want) {
					t.Errorf("response\n got %s\nwant %s", got, want)
				}
				// Nothing decoded may alias the payload, which the runtime
				// reuses.
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

// TestEventAllocs: on every event, every codec allocates less than the
// default codec (BenchmarkEvent has the figures). Both pay the one copy
// of NewHandler's Invoke, so the comparison is the runtime's.
func TestEventAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	for _, ev := range events.All() {
		allocs := func(name string) float64 {
			h := mustHandler(t, ev.Handler, concurrent.WithCodec(name))
			return testing.AllocsPerRun(50, func() {
				if _, err := h.Invoke(ctx, ev.Payload); err != nil {
					t.Fatal(err)
				}
			})
		}
		std := allocs(stdCodec)
		for _, name := range altCodecs {
			if n := allocs(name); n >= std {
				t.Errorf("%s: %s allocates %v per invocation, std %v", ev.Name, name, n, std)
			}
		}
	}
}

type panicsOnZero struct{ P *int }

func (v panicsOnZero) MarshalJSON() ([]byte, error) { return []byte{byte('0' + *v.P)}, nil }

// TestPrepareSurvivesMethods: preparing a codec may run the result type's
// MarshalJSON on a zero value; a panic there must not fail NewHandler.
func TestPrepareSurvivesMethods(t *testing.T) {
	f := func() (panicsOnZero, error) { n := 7; return panicsOnZero{&n}, nil }
	for _, name := range altCodecs {
		h, err := buildHandler(f, concurrent.WithCodec(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, err := h.Invoke(t.Context(), []byte(`{}`)); err != nil || string(b) != "7" {
			t.Errorf("%s: %q, %v; want 7", name, b, err)
		}
	}
}
