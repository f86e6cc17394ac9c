package concurrent

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/lmigo/lmigo/concurrent/codec"
)

// registry is where codecs are looked up: package codec's, or a test's
// that sees a binary linking none.
type registry struct {
	lookup func(name string) (codec.Factory, bool)
	linked func() []string
}

// stdCodec is the name of the built-in codec: encoding/json as
// aws-lambda-go uses it (handler.decode, handler.encode).
const stdCodec = "std"

// resolveCodec builds the codec named by LMIGO_JSON_CODEC (fromEnv) or, when
// that is unset, by WithCodec (fromOption), for the JSON options in cfg. The
// built-in codec is nil. A codec the binary does not link is an error that
// says how to link it.
func resolveCodec(reg registry, fromEnv, fromOption string, cfg handlerConfig) (codec.Codec, error) {
	name, source := fromEnv, "LMIGO_JSON_CODEC="+fromEnv
	if name == "" {
		name, source = fromOption, fmt.Sprintf("WithCodec(%q)", fromOption)
	}
	if name == "" || name == stdCodec {
		return nil, nil
	}
	f, ok := reg.lookup(name)
	if !ok {
		linked := strings.Join(reg.linked(), ", ")
		if linked == "" {
			linked = "none but std"
		}
		return nil, fmt.Errorf("%s: this bootstrap does not contain the JSON codec %q (linked: %s); link it by importing %q into the main package: import _ %q",
			source, name, linked, codec.ImportPath(name), codec.ImportPath(name))
	}
	c, err := f(codec.Options{
		EscapeHTML:            cfg.escapeHTML,
		Prefix:                cfg.indentPrefix,
		Indent:                cfg.indent,
		UseNumber:             cfg.useNumber,
		DisallowUnknownFields: cfg.disallowUnknownFields,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return c, nil
}

// prepareCodec lets the codec analyse the handler's event and result types
// once, at New, rather than on the first invocation.
func (h *handler) prepareCodec(t reflect.Type) {
	p, ok := h.cfg.codec.(codec.Preparer)
	if !ok {
		return
	}
	if h.event != nil {
		p.Prepare(h.event)
	}
	if h.hasOut {
		p.Prepare(t.Out(0))
	}
}
