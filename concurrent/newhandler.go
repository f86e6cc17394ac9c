package concurrent

import (
	"bytes"
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/valyala/bytebufferpool"
)

// NewHandler adapts handler to a lambda.Handler, as aws-lambda-go's
// lambda.NewHandler does, through the adapter the runtime runs: the same
// forms, the same JSON, the JSON options and [WithCodec]. Its Invoke may be
// called from many goroutines at once; the bytes it returns belong to the
// caller. A handler error is returned as it is, a panic as a *[PanicError],
// and an io.Reader result is read whole and closed.
//
// Only the JSON options and WithCodec apply; the options of a Runtime
// (WithLookupEnv, WithLogger, WithSIGTERM, WithContext, WithContextValue)
// are ignored: the handler gets the context given to Invoke, and the
// environment (LMIGO_JSON_CODEC too) is not read.
//
// As lambda.NewHandler, it returns no error: a handler of an unsupported
// form, or a codec that is not linked or does not support the JSON options
// given, gives a lambda.Handler whose every Invoke returns that error
// (wrapping ErrInvalidHandler or ErrConfig), and which [New] and [Start]
// refuse with it at once. So it nests as wrappers expect:
// otellambda.WrapHandler(concurrent.NewHandler(fn)).
//
// Served by [New] or [Start], a NewHandler's handler runs as fn itself
// would, without the copy a foreign lambda.Handler's bytes get.
func NewHandler(handler any, opts ...Option) lambda.Handler {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	c, err := resolveCodec(o.codecs, "", o.codec, o.handler)
	if err != nil {
		return refused{fmt.Errorf("%w: %w", ErrConfig, err)}
	}
	o.handler.codec = c
	h, err := newHandler(handler, o.handler)
	if err != nil {
		return refused{err} // wraps ErrInvalidHandler
	}
	return &invoker{h: h}
}

// refused is the lambda.Handler of a NewHandler that could not be built.
type refused struct{ err error }

func (r refused) Invoke(context.Context, []byte) ([]byte, error) { return nil, r.err }

// invoker is NewHandler's lambda.Handler.
type invoker struct {
	h *handler
	// bufs: one pool per handler, so that its buffers calibrate to this
	// handler's responses.
	bufs bytebufferpool.Pool
}

// ContentType is what the runtime sends a wrapper's answer as: the JSON
// of the handler's result, as aws-lambda-go sends lambda.NewHandler's.
// A wrapper passes it on by a ContentType method of its own.
func (i *invoker) ContentType() string { return jsonContentType }

// Invoke runs one invocation. The response is copied out of a pooled
// buffer, unlike aws-lambda-go's, whose bytes a later Invoke may overwrite.
// The handler writes into a Buffer of this call's own over the pooled
// array, which it lets go of on return (as handler.runLent).
func (i *invoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	buf := i.bufs.Get()
	defer i.bufs.Put(buf)
	out := &Buffer{B: buf.B}
	defer func() { buf.B, out.B = out.B, nil }()
	if _, err := i.h.call(ctx, payload, out); err != nil {
		return nil, err
	}
	return bytes.Clone(out.B), nil
}
