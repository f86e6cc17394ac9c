// Package codec is the seam between lmigo's handler adapter and a JSON
// library: the codec decodes the events and encodes the results of typed
// handlers (func(ctx, TIn) (TOut, error) and kin).
//
// The default, encoding/json used as aws-lambda-go v1.55.1 uses it, is
// built into the concurrent package and is not a Codec: it is byte for byte
// compatible with aws-lambda-go. Other codecs live in subpackages of this
// one, each registering itself under its name when it is imported, so that
// a bootstrap links only the codecs it imports:
//
//	import _ "github.com/lmigo/lmigo/concurrent/codec/sonic"
//
// and then concurrent.WithCodec("sonic"), or LMIGO_JSON_CODEC=sonic.
// json.RawMessage handlers, io.Reader results and error bodies never go
// through a Codec.
package codec

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// Options are the JSON options of the concurrent package
// (concurrent.WithSetEscapeHTML, concurrent.WithSetIndent,
// concurrent.WithUseNumber, concurrent.WithDisallowUnknownFields), given to
// a codec when it is built.
type Options struct {
	EscapeHTML            bool
	Prefix, Indent        string
	UseNumber             bool
	DisallowUnknownFields bool
}

// Codec decodes events and encodes results. It is shared by all workers and
// must be safe for concurrent use.
type Codec interface {
	// Decode decodes the JSON event in data into v, a non-nil pointer.
	// data is the buffer the payload was read into, reused once the
	// handler returns: nothing decoded may alias it.
	Decode(data []byte, v any) error
	// Append appends the JSON encoding of v to dst, without a trailing
	// newline (the caller adds aws-lambda-go's when indenting), and
	// returns the extended slice. On error the bytes after len(dst) are
	// dropped by the caller.
	Append(dst []byte, v any) ([]byte, error)
}

// Preparer is a Codec that can analyse a type ahead of the first
// invocation (compile its encoder or decoder). The concurrent package
// calls Prepare at New for the event and result types of the handler; a
// type the codec cannot handle fails at the invocation instead.
type Preparer interface {
	Prepare(t reflect.Type)
}

// Factory builds a codec for the given options, or says which option it
// does not support.
type Factory func(Options) (Codec, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes a codec available under name. It is called from the init
// function of a codec package; registering a name twice panics.
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[name]; dup {
		panic(fmt.Sprintf("codec: %q registered twice", name))
	}
	factories[name] = f
}

// Lookup returns the factory registered under name.
func Lookup(name string) (Factory, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := factories[name]
	return f, ok
}

// Linked lists the names of the registered codecs, sorted.
func Linked() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(factories))
	for n := range factories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ImportPath is the package that registers the codec of the given name,
// for error messages that say how to link it.
func ImportPath(name string) string {
	return "github.com/lmigo/lmigo/concurrent/codec/" + name
}

// Unsupported is the error of a factory given an option its codec does not
// support.
func Unsupported(codec, option string) error {
	return fmt.Errorf("codec %s does not support %s", codec, option)
}

// Warm encodes the zero value of t (of its element type, for a pointer)
// with c and decodes the result back, so that a codec that builds its
// encoders and decoders on first use has built them for t. Codec packages
// without an analysis entry point use it as their Prepare.
//
// It runs the type's MarshalJSON and UnmarshalJSON methods, if any, on a
// zero value: a panic there is recovered and left to the invocation.
func Warm(c Codec, t reflect.Type) {
	defer func() { _ = recover() }()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p := reflect.New(t)
	b, err := c.Append(nil, p.Interface())
	if err == nil {
		_ = c.Decode(b, p.Interface()) // warming only: an error here says nothing
	}
}
