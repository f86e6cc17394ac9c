// Package jsonv2 registers the codec "jsonv2": encoding/json/v2 semantics,
// from github.com/go-json-experiment/json, the module Go's experimental
// encoding/json/v2 (GOEXPERIMENT=jsonv2) is developed in, usable without
// the experiment.
//
// It is set closer to what aws-lambda-go answers than v2's defaults: nil
// slices and maps encode as null, omitempty omits false and 0 as in v1, map
// keys are sorted, invalid UTF-8 is replaced rather than an error, and
// duplicate member names are accepted. Member names still match case
// sensitively, and trailing data after the event is an error. What still
// differs from the default codec is listed in docs/codecs.md.
package jsonv2

import (
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/lmigo/lmigo/concurrent/codec"
)

// Name is the codec's name for concurrent.WithCodec and LMIGO_JSON_CODEC.
const Name = "jsonv2"

func init() { codec.Register(Name, New) }

type jsonCodec struct{ enc, dec json.Options }

// New builds the codec. WithUseNumber has no v2 equivalent; an indent other
// than spaces and tabs is refused by v2.
func New(o codec.Options) (codec.Codec, error) {
	if o.UseNumber {
		return nil, codec.Unsupported(Name, "WithUseNumber")
	}
	enc := json.JoinOptions(
		json.FormatNilSliceAsNull(true),
		json.FormatNilMapAsNull(true),
		json.Deterministic(true), // sorted map keys, as encoding/json
		// aws-lambda-go's events types rely on v1's omitempty (false, 0):
		// v2's omits only empty JSON.
		jsonv1.OmitEmptyWithLegacySemantics(true),
		jsontext.AllowInvalidUTF8(true),
		jsontext.EscapeForHTML(o.EscapeHTML),
	)
	if o.Prefix != "" || o.Indent != "" {
		if strings.Trim(o.Prefix+o.Indent, " \t") != "" {
			return nil, codec.Unsupported(Name, "an indent other than spaces and tabs")
		}
		enc = json.JoinOptions(enc, jsontext.Multiline(true),
			jsontext.WithIndentPrefix(o.Prefix), jsontext.WithIndent(o.Indent))
	}
	dec := json.JoinOptions(
		jsontext.AllowDuplicateNames(true),
		jsontext.AllowInvalidUTF8(true),
		json.RejectUnknownMembers(o.DisallowUnknownFields),
	)
	return &jsonCodec{enc: enc, dec: dec}, nil
}

// Decode unmarshals data, which must hold one JSON value: v2 rejects
// trailing data.
func (c *jsonCodec) Decode(data []byte, v any) error { return json.Unmarshal(data, v, c.dec) }

// Append marshals through a writer over dst: v2 has no append form, and
// MarshalWrite encodes into its own pooled buffer and writes it once.
func (c *jsonCodec) Append(dst []byte, v any) ([]byte, error) {
	w := appender{b: dst}
	err := json.MarshalWrite(&w, v, c.enc)
	return w.b, err
}

// Prepare builds and caches v2's arshalers for t at init rather than on
// the first invocation.
func (c *jsonCodec) Prepare(t reflect.Type) { codec.Warm(c, t) }

type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) { a.b = append(a.b, p...); return len(p), nil }
