// Package segmentio registers the codec "segmentio":
// github.com/segmentio/encoding/json, a drop-in for encoding/json in pure Go
// (unsafe, type-compiled codecs), the same code on amd64 and arm64.
package segmentio

import (
	"reflect"

	"github.com/lmigo/lmigo/concurrent/codec"
	"github.com/segmentio/encoding/json"
)

// Name is the codec's name for concurrent.WithCodec and LMIGO_JSON_CODEC.
const Name = "segmentio"

func init() { codec.Register(Name, New) }

type jsonCodec struct {
	parse json.ParseFlags
	app   json.AppendFlags
}

// New builds the codec. It cannot indent.
func New(o codec.Options) (codec.Codec, error) {
	if o.Prefix != "" || o.Indent != "" {
		return nil, codec.Unsupported(Name, "WithSetIndent")
	}
	c := &jsonCodec{app: json.SortMapKeys} // as encoding/json
	if o.EscapeHTML {
		c.app |= json.EscapeHTML
	}
	if o.UseNumber {
		c.parse |= json.UseNumber
	}
	if o.DisallowUnknownFields {
		c.parse |= json.DisallowUnknownFields
	}
	return c, nil
}

// Decode parses the first JSON value of data and ignores what follows, as
// json.Decoder does. Strings are copied (no DontCopyString, no ZeroCopy):
// the payload is reused.
func (c *jsonCodec) Decode(data []byte, v any) error {
	_, err := json.Parse(data, v, c.parse)
	return err
}

// Append encodes straight into dst.
func (c *jsonCodec) Append(dst []byte, v any) ([]byte, error) { return json.Append(dst, v, c.app) }

// Prepare builds segmentio's codec for t at init.
func (c *jsonCodec) Prepare(t reflect.Type) { codec.Warm(c, t) }
