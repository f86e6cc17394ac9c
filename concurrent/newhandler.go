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
// It returns an error wrapping ErrInvalidHandler for a handler of an
// unsupported form, and ErrConfig for a codec that is not linked or does
// not support the JSON options given.
func NewHandler(handler any, opts ...Option) (lambda.Handler, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	c, err := resolveCodec("", o.codec, o.handler)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	o.handler.codec = c
	h, err := newHandler(handler, o.handler)
	if err != nil {
		return nil, err // wraps ErrInvalidHandler
	}
	return &invoker{h: h}, nil
}

// invoker is NewHandler's lambda.Handler.
type invoker struct {
	h *handler
	// bufs: one pool per handler, so that its buffers calibrate to this
	// handler's responses.
	bufs bytebufferpool.Pool
}

// Invoke runs one invocation. The response is copied out of a pooled
// buffer, unlike aws-lambda-go's, whose bytes a later Invoke may overwrite.
func (i *invoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	out := i.bufs.Get()
	defer i.bufs.Put(out)
	if _, err := i.h.call(ctx, payload, out); err != nil {
		return nil, err
	}
	return bytes.Clone(out.B), nil
}
