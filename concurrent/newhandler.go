package concurrent

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/valyala/bytebufferpool"
)

// NewHandler adapts handler to a lambda.Handler, as lambda.NewHandler
// does, through the runtime's own adapter. Its Invoke is safe for
// concurrent use and returns bytes the caller owns, where
// lambda.NewHandler's returns a pooled buffer. A panic is returned as a
// *[PanicError]. An io.Reader result is read whole, up to 6 MiB; past that
// Invoke fails with [ErrResponseTooLarge]. Its value is a [StreamInvoker],
// whose InvokeStream returns such a reader unread.
//
// Only the JSON options and WithCodec apply; the environment is not read.
// Like lambda.NewHandler it returns no error: a bad handler or codec gives
// a lambda.Handler whose every Invoke returns that error, and which [New]
// and [Start] refuse at once. So it nests as wrappers expect:
// otellambda.WrapHandler(concurrent.NewHandler(fn)).
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

func (r refused) InvokeStream(context.Context, []byte) (string, []byte, io.Reader, error) {
	return "", nil, nil, r.err
}

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

// InvokeStream runs one invocation as the runtime runs the handler. A
// reader result is returned unread, as body. Other answers are copied out
// of a pooled buffer, as by Invoke. The handler writes them through a
// Buffer of this call's own (handler.runLent).
func (i *invoker) InvokeStream(ctx context.Context, payload []byte) (string, []byte, io.Reader, error) {
	out := i.bufs.Get()
	defer i.bufs.Put(out)
	contentType, body, direct, err := i.h.runLent(ctx, payload, out, &Buffer{})
	switch {
	case err != nil:
		return "", nil, nil, unwrapEvent(err)
	case body != nil:
		return contentType, nil, body, nil
	case direct != nil:
		return contentType, bytes.Clone(direct), nil, nil
	}
	return contentType, bytes.Clone(out.B), nil, nil
}
