// Package sonic registers the codec "sonic": github.com/bytedance/sonic.
// On amd64 it compiles each type's encoder and decoder to machine code
// (a JIT) and uses SIMD (SSE/AVX2) for strings and numbers; on arm64 it
// runs no JIT, but an interpreter (encoder) and a specialised decoder with
// NEON routines; on other architectures, or a Go it does not know, it is
// encoding/json.
//
// Strings are copied out of the payload (CopyString), since the payload
// buffer is reused, and invalid UTF-8 is replaced on output
// (ValidateString), as encoding/json does.
package sonic

import (
	"reflect"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
	"github.com/lmigo/lmigo/concurrent/codec"
)

// Name is the codec's name for concurrent.WithCodec and LMIGO_JSON_CODEC.
const Name = "sonic"

func init() { codec.Register(Name, New) }

type jsonCodec struct {
	o    codec.Options
	api  sonic.API
	opts encoder.Options
}

// New builds the codec; it supports every option.
func New(o codec.Options) (codec.Codec, error) {
	cfg := sonic.Config{
		EscapeHTML:            o.EscapeHTML,
		SortMapKeys:           true, // as encoding/json
		ValidateString:        true,
		CopyString:            true,
		UseNumber:             o.UseNumber,
		DisallowUnknownFields: o.DisallowUnknownFields,
		NoEncoderNewline:      true,
	}
	opts := encoder.SortMapKeys | encoder.ValidateString | encoder.NoEncoderNewline
	if o.EscapeHTML {
		opts |= encoder.EscapeHTML
	}
	return &jsonCodec{o: o, api: cfg.Froze(), opts: opts}, nil
}

func (c *jsonCodec) Decode(data []byte, v any) error { return c.api.Unmarshal(data, v) }

// Append encodes straight into dst.
func (c *jsonCodec) Append(dst []byte, v any) ([]byte, error) {
	if c.o.Prefix != "" || c.o.Indent != "" {
		b, err := encoder.EncodeIndented(v, c.o.Prefix, c.o.Indent, c.opts)
		return append(dst, b...), err
	}
	err := encoder.EncodeInto(&dst, v, c.opts)
	return dst, err
}

// Prepare compiles sonic's encoder and decoder for t at init (Pretouch).
func (c *jsonCodec) Prepare(t reflect.Type) { _ = sonic.Pretouch(t) }
