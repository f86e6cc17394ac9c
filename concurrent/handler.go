package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unsafe"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/handlertrace"
	"github.com/lmigo/lmigo/concurrent/codec"
	"github.com/lmigo/lmigo/internal/jsonscan"
	"github.com/valyala/bytebufferpool"
)

// Buffer is the response buffer a [RawHandler] writes into. Each
// invocation gets its own, over a reused array that is valid only until
// the handler returns.
type Buffer = bytebufferpool.ByteBuffer

// RawHandler handles one invocation without JSON: it reads payload and
// writes the response into out, empty on entry, sent as application/json.
// On error what it wrote is dropped.
//
// Neither may be used after it returns: their arrays serve later
// invocations. A late Write to out is never sent. out.B may be set to the
// handler's own slice, a shared static answer say. The runtime then reads
// it until the answer is taken, so it must not change meanwhile; it never
// writes to it. docs/design.md, "Exactly once", says why.
type RawHandler func(ctx context.Context, payload []byte, out *Buffer) error

// Content types of successful responses, as aws-lambda-go sends them.
const (
	jsonContentType  = "application/json"
	bytesContentType = "application/octet-stream"
)

// handlerConfig holds the JSON options of a handler (see options.go).
type handlerConfig struct {
	escapeHTML            bool
	indentPrefix, indent  string
	useNumber             bool
	disallowUnknownFields bool
	// codec decodes events and encodes results of typed handlers; nil is
	// the built-in encoding/json, byte for byte as aws-lambda-go.
	codec codec.Codec
}

// handlerPath is the way call runs a handler, chosen once by newHandler.
type handlerPath uint8

const (
	// pathRaw: a RawHandler, no JSON at all.
	pathRaw handlerPath = iota
	// pathInvoker: a lambda.Handler object; its bytes are sent as they are,
	// and a StreamInvoker's stream is streamed.
	pathInvoker
	// pathNoIO: no event and no value returned (func(ctx) error and kin);
	// the payload is never looked at, the response is JSON null.
	pathNoIO
	// pathRawMessage: json.RawMessage in and out, without reflection.
	pathRawMessage
	// pathReflect: everything else, through reflect.Value.Call.
	pathReflect
)

var pathNames = [...]string{"raw", "invoker", "noio", "rawmessage", "reflect"}

func (p handlerPath) String() string { return pathNames[p] }

// handler adapts one user handler to the runtime. Everything that can be
// worked out from the handler's type is worked out once, by newHandler; a
// handler is immutable afterwards and shared by all slots.
type handler struct {
	path handlerPath
	cfg  handlerConfig

	raw          RawHandler
	invoker      lambda.Handler
	invokerCType string
	streamer     StreamInvoker // invoker, when it is one
	// awsFunc is what aws-lambda-go's own invoker runs (awsHandlerFunc).
	awsFunc    func(context.Context, []byte) (io.Reader, error)
	noIO       func(context.Context) error
	rawMessage rawMessageFunc

	fn       reflect.Value // pathReflect
	takesCtx bool          // first argument is the context
	event    reflect.Type  // type of the event argument; nil when there is none
	// hasOut: the handler returns (TOut, error). Otherwise the response is
	// null, and trace hooks see no response event, as in aws-lambda-go.
	hasOut bool

	// null is what encoding a missing value produces under cfg.
	null []byte
	// plain: cfg is the default (no HTML escaping, no indentation), so JSON
	// that is already compact is encoded as itself.
	plain bool
	// decoderOnly: the decoder options have no json.Unmarshal equivalent.
	decoderOnly bool
}

var (
	contextInterface = reflect.TypeFor[context.Context]()
	errorInterface   = reflect.TypeFor[error]()
)

// newHandler checks fn once and builds its adapter. Every form lambda.Start
// accepts is accepted, plus RawHandler; anything else is an error wrapping
// ErrInvalidHandler, returned here rather than on every invocation.
func newHandler(fn any, cfg handlerConfig) (*handler, error) {
	h := &handler{
		cfg:         cfg,
		plain:       !cfg.escapeHTML && cfg.indentPrefix == "" && cfg.indent == "",
		decoderOnly: cfg.useNumber || cfg.disallowUnknownFields,
	}
	var null Buffer
	_ = h.encode(&null, nil) // nil always encodes
	h.null = null.B

	switch f := fn.(type) {
	case nil:
		return nil, fmt.Errorf("%w: handler is nil", ErrInvalidHandler)
	case RawHandler:
		return h.setRaw(f)
	case func(context.Context, []byte, *Buffer) error:
		return h.setRaw(f)
	case *invoker:
		if f == nil {
			return nil, fmt.Errorf("%w: handler is a nil %T", ErrInvalidHandler, fn)
		}
		return f.h, nil // NewHandler's: run as its own handler, no copy
	case refused:
		return nil, f.err
	case lambda.Handler:
		if v := reflect.ValueOf(f); v.Kind() == reflect.Pointer && v.IsNil() {
			return nil, fmt.Errorf("%w: handler is a nil %T", ErrInvalidHandler, fn)
		}
		h.path, h.invoker = pathInvoker, f
		if si, ok := f.(StreamInvoker); ok {
			h.streamer = si // a content type per answer
			return h, nil
		}
		h.invokerCType = invokerContentType(f)
		h.awsFunc = awsHandlerFunc(f)
		return h, nil
	}

	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func {
		return nil, fmt.Errorf("%w: handler kind %s is not func (%T)", ErrInvalidHandler, t.Kind(), fn)
	}
	if v.IsNil() {
		return nil, fmt.Errorf("%w: handler is a nil %T", ErrInvalidHandler, fn)
	}
	if f, ok := convertFunc[RawHandler](v); ok { // a named type of RawHandler's signature
		return h.setRaw(f)
	}
	if err := h.analyse(t); err != nil {
		return nil, fmt.Errorf("%w: %w (%T)", ErrInvalidHandler, err, fn)
	}
	h.path, h.fn = pathReflect, v
	if f := asNoIO(v); f != nil {
		h.path, h.noIO = pathNoIO, f
	} else if f := asRawMessage(v); f != nil {
		h.path, h.rawMessage = pathRawMessage, f
	} else {
		h.prepareCodec(t)
	}
	return h, nil
}

func (h *handler) setRaw(f RawHandler) (*handler, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: handler is a nil RawHandler", ErrInvalidHandler)
	}
	h.path, h.raw = pathRaw, f
	return h, nil
}

// analyse checks the signature of a handler function by the rules of
// lambda.Start and records what call needs.
func (h *handler) analyse(t reflect.Type) error {
	switch t.NumIn() {
	case 0:
	case 1:
		in := t.In(0)
		// An interface with methods must be the context; func(any) takes an event.
		if in.Kind() == reflect.Interface && in.NumMethod() > 0 {
			if !isContext(in) {
				return fmt.Errorf("handler takes an interface, but it is not context.Context: %s", in)
			}
			h.takesCtx = true
		} else {
			h.event = in
		}
	case 2:
		if in := t.In(0); !isContext(in) {
			return fmt.Errorf("handler takes two arguments, but the first is not context.Context: %s", in)
		}
		h.takesCtx, h.event = true, t.In(1)
	default:
		return fmt.Errorf("handler may not take more than two arguments, but takes %d", t.NumIn())
	}
	switch t.NumOut() {
	case 0:
	case 1:
		if !t.Out(0).Implements(errorInterface) {
			return fmt.Errorf("handler returns a single value, but %s does not implement error", t.Out(0))
		}
	case 2:
		if !t.Out(1).Implements(errorInterface) {
			return fmt.Errorf("handler returns two values, but the second, %s, does not implement error", t.Out(1))
		}
		h.hasOut = true
	default:
		return fmt.Errorf("handler may not return more than two values, but returns %d", t.NumOut())
	}
	return nil
}

// isContext reports whether t is context.Context or an interface with
// exactly its methods.
func isContext(t reflect.Type) bool {
	return t.Kind() == reflect.Interface && contextInterface.Implements(t) && t.Implements(contextInterface)
}

// asNoIO returns the handler as func(ctx) error when it takes no event and
// returns no value, or nil.
func asNoIO(v reflect.Value) func(context.Context) error {
	if f, ok := convertFunc[func(context.Context) error](v); ok {
		return f
	}
	if f, ok := convertFunc[func(context.Context)](v); ok {
		return func(ctx context.Context) error { f(ctx); return nil }
	}
	if f, ok := convertFunc[func() error](v); ok {
		return func(context.Context) error { return f() }
	}
	if f, ok := convertFunc[func()](v); ok {
		return func(context.Context) error { f(); return nil }
	}
	return nil
}

// rawMessageFunc is the form every json.RawMessage handler is run as.
type rawMessageFunc = func(context.Context, json.RawMessage) (json.RawMessage, error)

// asRawMessage returns the handler as a rawMessageFunc when it takes a
// json.RawMessage event and returns a json.RawMessage and an error, an
// error, or nothing; or nil.
func asRawMessage(v reflect.Value) rawMessageFunc {
	if f, ok := convertFunc[rawMessageFunc](v); ok {
		return f
	}
	if f, ok := convertFunc[func(json.RawMessage) (json.RawMessage, error)](v); ok {
		return func(_ context.Context, m json.RawMessage) (json.RawMessage, error) { return f(m) }
	}
	if f, ok := convertFunc[func(context.Context, json.RawMessage) error](v); ok {
		return func(ctx context.Context, m json.RawMessage) (json.RawMessage, error) { return nil, f(ctx, m) }
	}
	if f, ok := convertFunc[func(json.RawMessage) error](v); ok {
		return func(_ context.Context, m json.RawMessage) (json.RawMessage, error) { return nil, f(m) }
	}
	if f, ok := convertFunc[func(context.Context, json.RawMessage)](v); ok {
		return func(ctx context.Context, m json.RawMessage) (json.RawMessage, error) { f(ctx, m); return nil, nil }
	}
	if f, ok := convertFunc[func(json.RawMessage)](v); ok {
		return func(_ context.Context, m json.RawMessage) (json.RawMessage, error) { f(m); return nil, nil }
	}
	return nil
}

// convertFunc returns the function v as an F when its type is F or a named
// type of F's signature, so that it can be called without reflection.
func convertFunc[F any](v reflect.Value) (F, bool) {
	t := reflect.TypeFor[F]()
	if !v.Type().ConvertibleTo(t) {
		var zero F
		return zero, false
	}
	f, ok := v.Convert(t).Interface().(F)
	return f, ok
}

// maxReadResponse bounds what call reads of a reader result: the default
// LMIGO_MAX_RESPONSE_BYTES, the platform's bound on a buffered answer.
const maxReadResponse = 6 << 20

// call runs the handler for one invocation, as run does. It reads an
// io.Reader result whole into out and closes it, as aws-lambda-go's Invoke
// does. Past maxReadResponse bytes it fails with ErrResponseTooLarge.
// NewHandler's Invoke is built on it; the runtime streams such a result.
func (h *handler) call(ctx context.Context, payload []byte, out *Buffer) (contentType string, err error) {
	contentType, body, direct, err := h.run(ctx, payload, out)
	err = unwrapEvent(err)
	if direct != nil {
		out.B = append(out.B, direct...)
	}
	if body == nil {
		return contentType, err
	}
	defer func() {
		if v := recover(); v != nil {
			out.Reset()
			contentType, err = "", newPanicError(v)
		}
	}()
	if err := copyReader(out, body, maxReadResponse); err != nil {
		out.Reset()
		return "", err
	}
	return contentType, nil
}

// run runs the handler for one invocation and returns its content type
// with the answer in one of three places:
//
//   - out, empty on entry, holds the encoded response;
//   - body is a reader result (see writeValue), unread, for the caller to
//     stream and close;
//   - direct is the handler's own bytes, sent as they are: a compact
//     json.RawMessage (callRawMessage, callReflect) or a lambda.Handler's
//     bytes (callInvoker).
//
// On error out is empty and body and direct are nil. A panic comes back
// as a *PanicError, so it never reaches the slot's loop. An event that
// does not decode comes back as an *eventError. A RawHandler may keep out,
// so out must be the invocation's own (runLent).
func (h *handler) run(ctx context.Context, payload []byte, out *Buffer) (contentType string, body io.Reader, direct []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			out.Reset()
			contentType, body, direct, err = "", nil, nil, newPanicError(v)
		}
	}()
	switch h.path {
	case pathRaw:
		contentType = jsonContentType
		direct, err = h.callRaw(ctx, payload, out)
	case pathInvoker:
		contentType, body, direct, err = h.callInvoker(ctx, payload, out)
	case pathNoIO:
		contentType, err = jsonContentType, h.noIO(ctx)
		if err == nil {
			out.B = append(out.B, h.null...)
		}
	case pathRawMessage:
		contentType, direct, err = h.callRawMessage(ctx, payload, out)
	default:
		contentType, body, direct, err = h.callReflect(ctx, payload, out)
	}
	if err != nil {
		out.Reset()
		contentType, body, direct = "", nil, nil
	}
	return contentType, body, direct, err
}

// runLent is run with the handler writing into lent, a Buffer of the
// invocation's own, over buf's array. However run ends (runtime.Goexit
// too), buf gets the array back and lent is left empty. So a RawHandler
// that kept its out appends to an array of its own later. It never
// reaches buf's, which the next invocation reuses. lent is never lent
// again.
func (h *handler) runLent(ctx context.Context, payload []byte, buf, lent *Buffer) (contentType string, body io.Reader, direct []byte, err error) {
	lent.B = buf.B
	defer func() { buf.B, lent.B = lent.B, nil }()
	return h.run(ctx, payload, lent)
}

// callRaw runs a RawHandler. Its response may lie in an array the runtime
// did not lend: a slice of its own, the payload, or one append grew. That
// one is returned as direct, borrowed until the answer is accepted. The
// lent array goes back into out, even after a panic. The handler may share
// such an array, so the runtime never writes to, keeps or lends it. After
// a growth the next buffer lent is large enough: a steady size allocates
// nothing.
func (h *handler) callRaw(ctx context.Context, payload []byte, out *Buffer) (direct []byte, err error) {
	lent := out.B[:0]
	defer func() {
		if !sameArray(out.B, lent) {
			direct, out.B = out.B, lent
		}
	}()
	return nil, h.raw(ctx, payload, out)
}

// sameArray reports whether a and b are slices of the same array (from its
// start), or both have none.
func sameArray(a, b []byte) bool {
	if cap(a) == 0 || cap(b) == 0 {
		return cap(a) == cap(b)
	}
	return unsafe.SliceData(a) == unsafe.SliceData(b)
}

// callRawMessage runs a json.RawMessage handler. A result the encoder
// would only validate and compact (jsonscan.Compact, one pass) is returned
// as direct, the handler's own bytes: byte for byte what aws-lambda-go
// sends. Sending it direct allocates nothing. No size is copied, since
// copying costs more even when small (BenchmarkRawMessageResponse: 64 B to
// 6 MiB); rapi joins a small body to its headers either way.
func (h *handler) callRawMessage(ctx context.Context, payload []byte, out *Buffer) (string, []byte, error) {
	trace := handlertrace.FromContext(ctx)
	event, err := decodeRawMessage(payload)
	if err != nil {
		return "", nil, &eventError{err, reflect.TypeFor[json.RawMessage]()}
	}
	if trace.RequestEvent != nil {
		trace.RequestEvent(ctx, event)
	}
	res, err := h.rawMessage(ctx, event)
	if err != nil {
		return "", nil, err
	}
	if !h.hasOut {
		out.B = append(out.B, h.null...)
		return jsonContentType, nil, nil
	}
	if trace.ResponseEvent != nil {
		trace.ResponseEvent(ctx, res)
	}
	// The encoder would only validate and compact it.
	if h.plain && res != nil && jsonscan.Compact(res) {
		return jsonContentType, res, nil
	}
	contentType, _, err := h.writeValue(out, res) // not a reader
	return contentType, nil, err
}

// decodeRawMessage decodes the event of a json.RawMessage handler as
// json.Decoder does: the first JSON value of payload, copied, since the
// handler may keep it and payload is reused.
func decodeRawMessage(payload []byte) (json.RawMessage, error) {
	if json.Valid(payload) {
		return append(json.RawMessage(nil), trimJSONSpace(payload)...), nil
	}
	var m json.RawMessage
	err := json.NewDecoder(bytes.NewReader(payload)).Decode(&m)
	return m, err
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimJSONSpace(b []byte) []byte {
	for len(b) > 0 && isJSONSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isJSONSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// callReflect runs any other handler through reflection. A json.RawMessage
// result is sent direct, as in callRawMessage.
func (h *handler) callReflect(ctx context.Context, payload []byte, out *Buffer) (string, io.Reader, []byte, error) {
	trace := handlertrace.FromContext(ctx)
	var args [2]reflect.Value
	n := 0
	if h.takesCtx {
		args[n] = contextValue(ctx)
		n++
	}
	if h.event != nil {
		event := reflect.New(h.event)
		if err := h.decode(payload, event.Interface()); err != nil {
			return "", nil, nil, &eventError{err, h.event}
		}
		if trace.RequestEvent != nil {
			trace.RequestEvent(ctx, event.Elem().Interface())
		}
		args[n] = event.Elem()
		n++
	}
	res := h.fn.Call(args[:n])
	// Like aws-lambda-go, a typed nil returned as a concrete error type is
	// an error: it is a non-nil error interface.
	if len(res) > 0 {
		if err, _ := res[len(res)-1].Interface().(error); err != nil {
			return "", nil, nil, err
		}
	}
	if !h.hasOut {
		out.B = append(out.B, h.null...)
		return jsonContentType, nil, nil, nil
	}
	val := res[0].Interface()
	if trace.ResponseEvent != nil {
		trace.ResponseEvent(ctx, val)
	}
	if m, ok := val.(json.RawMessage); ok && h.plain && m != nil && jsonscan.Compact(m) {
		return jsonContentType, nil, m, nil // the encoder would only validate and compact it
	}
	contentType, body, err := h.writeValue(out, val)
	return contentType, body, nil, err
}

// contextValue makes a reflect.Value of type context.Context. Call passes
// it on as it is; one of ctx's dynamic type it would convert anew on every
// invocation.
func contextValue(ctx context.Context) reflect.Value {
	return reflect.ValueOf(&ctx).Elem()
}

// decode decodes the event as json.Decoder does: the first JSON value of
// payload, anything after it ignored. json.Unmarshal skips the decoder's
// copy and agrees with it on a payload of one valid value; only other
// payloads take the decoder. UnmarshalJSON methods must copy what they
// keep, as encoding/json requires, since payload is reused.
func (h *handler) decode(payload []byte, v any) error {
	if h.cfg.codec != nil {
		return h.cfg.codec.Decode(payload, v)
	}
	if !h.decoderOnly {
		err := json.Unmarshal(payload, v)
		if err == nil {
			return nil // before errors.As: its target escapes, an allocation per call
		}
		// A syntax error from a valid payload came from an UnmarshalJSON
		// method and is the decoder's answer as well.
		if se := (*json.SyntaxError)(nil); !errors.As(err, &se) || json.Valid(payload) {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	if h.cfg.useNumber {
		dec.UseNumber()
	}
	if h.cfg.disallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(v)
}

// writeValue writes the response for the value a handler returned, by
// aws-lambda-go's rules. That is JSON, except for an io.Reader that does
// not encode, or encodes as an empty object: it is sent as the bytes it
// reads.
// Such a reader is returned as body, unread, with out empty; its
// ContentType method, if any, names the content type.
func (h *handler) writeValue(out *Buffer, val any) (contentType string, body io.Reader, err error) {
	err = h.encode(out, val)
	r, isReader := val.(io.Reader)
	switch {
	case err != nil && isReader, err == nil && isReader && bytes.HasPrefix(out.B, []byte("{}")):
		out.Reset()
		return readerContentType(r), r, nil
	case err != nil:
		return "", nil, err
	}
	return jsonContentType, nil, nil
}

// encode appends v as JSON to out, with the encoder's newline only when
// indenting, as aws-lambda-go does. On error nothing is written.
func (h *handler) encode(out *Buffer, v any) error {
	if h.cfg.codec != nil {
		b, err := h.cfg.codec.Append(out.B, v)
		if err != nil {
			return err // out.B is as it was
		}
		out.B = b
		if !h.plainIndent() {
			out.B = append(out.B, '\n')
		}
		return nil
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(h.cfg.escapeHTML)
	enc.SetIndent(h.cfg.indentPrefix, h.cfg.indent)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if h.plainIndent() {
		out.B = out.B[:len(out.B)-1]
	}
	return nil
}

// plainIndent: no indentation, so no trailing newline.
func (h *handler) plainIndent() bool { return h.cfg.indentPrefix == "" && h.cfg.indent == "" }

// readerContentType is the content type of a response reader: its
// ContentType method's, else application/octet-stream, as in aws-lambda-go.
func readerContentType(r io.Reader) string {
	if ct, ok := r.(interface{ ContentType() string }); ok {
		return ct.ContentType()
	}
	return bytesContentType
}

// copyReader copies a response reader into out once, up to limit bytes,
// and closes it if it is an io.Closer. Past limit it stops reading and
// returns an error wrapping ErrResponseTooLarge: a reader that does not
// end must not grow out without bound.
func copyReader(out *Buffer, r io.Reader, limit int) error {
	if c, ok := r.(io.Closer); ok {
		defer c.Close() // the response is complete or refused: a close error changes nothing
	}
	var err error
	over := false
	if wt, ok := r.(io.WriterTo); ok {
		w := &limitedWriter{out: out, limit: limit}
		_, err = wt.WriteTo(w)
		over = w.over // even if WriteTo dropped the error
	} else {
		_, err = out.ReadFrom(io.LimitReader(r, int64(limit)+1))
		over = len(out.B) > limit
	}
	if over {
		return fmt.Errorf("%w: the response reader gave more than %d bytes", ErrResponseTooLarge, limit)
	}
	return err
}

// limitedWriter appends to out and refuses a Write that would take it
// past limit bytes.
type limitedWriter struct {
	out   *Buffer
	limit int
	over  bool
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit-len(w.out.B) {
		w.over = true
		return 0, ErrResponseTooLarge
	}
	return w.out.Write(p)
}
