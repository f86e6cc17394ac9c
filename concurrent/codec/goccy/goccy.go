// Package goccy registers the codec "goccy": github.com/goccy/go-json, a
// reflection-free (unsafe, type-compiled) drop-in for encoding/json in pure
// Go, the same code on amd64 and arm64.
package goccy

import (
	"bytes"
	"reflect"

	"github.com/goccy/go-json"
	"github.com/lmigo/lmigo/concurrent/codec"
)

// Name is the codec's name for concurrent.WithCodec and LMIGO_JSON_CODEC.
const Name = "goccy"

func init() { codec.Register(Name, New) }

type jsonCodec struct {
	o   codec.Options
	enc []json.EncodeOptionFunc
	// stream: UseNumber and DisallowUnknownFields exist only on the
	// Decoder.
	stream bool
}

// New builds the codec; it supports every option.
func New(o codec.Options) (codec.Codec, error) {
	c := &jsonCodec{o: o, stream: o.UseNumber || o.DisallowUnknownFields}
	if !o.EscapeHTML {
		c.enc = append(c.enc, json.DisableHTMLEscape())
	}
	return c, nil
}

// Decode unmarshals data; go-json copies it first (it needs a terminating
// NUL), so nothing aliases the payload.
func (c *jsonCodec) Decode(data []byte, v any) error {
	if !c.stream {
		return json.UnmarshalWithOption(data, v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if c.o.UseNumber {
		dec.UseNumber()
	}
	if c.o.DisallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(v)
}

// Append marshals v and copies the result: go-json has no append form.
func (c *jsonCodec) Append(dst []byte, v any) ([]byte, error) {
	var b []byte
	var err error
	if c.o.Prefix != "" || c.o.Indent != "" {
		b, err = json.MarshalIndentWithOption(v, c.o.Prefix, c.o.Indent, c.enc...)
	} else {
		b, err = json.MarshalWithOption(v, c.enc...)
	}
	return append(dst, b...), err
}

// Prepare compiles go-json's encoder and decoder for t at init.
func (c *jsonCodec) Prepare(t reflect.Type) { codec.Warm(c, t) }
