package concurrent

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"unsafe"

	"github.com/aws/aws-lambda-go/lambda"
)

// A lambda.Handler, and aws-lambda-go's own among them. The value of
// lambda.NewHandler cannot have its Invoke run N at once. It is run as
// aws-lambda-go runs it, through its handlerFunc. That is read by reflect
// and unsafe from v1.55.1's unexported fields (TestAWSHandlerFunc pins
// that shape). Nothing else in the package reads another module's
// internals.

// callInvoker runs a lambda.Handler. Its bytes are returned as direct,
// posted as they are, whatever their size and N. Like a json.RawMessage
// result, they must not change once Invoke has returned. aws-lambda-go
// relies on that too when it serves N at once. A StreamInvoker is run
// through InvokeStream: its bytes likewise, or its stream as body.
//
// aws-lambda-go's own lambda.Handler, the value of lambda.NewHandler, is
// the exception. Its Invoke returns the bytes of a pooled buffer that it
// has put back already. A concurrent Invoke may write over them while
// they are read (TestInvokerBytesAtN). It is run as aws-lambda-go runs
// it: its function, whose buffer is copied into out and put back after.
func (h *handler) callInvoker(ctx context.Context, payload []byte, out *Buffer) (string, io.Reader, []byte, error) {
	// A copy: aws-lambda-go gives Invoke a slice of its own, which an
	// Invoke may keep; the slot's buffer is reused once this one returns.
	payload = bytes.Clone(payload)
	if h.streamer != nil {
		contentType, b, body, err := h.streamer.InvokeStream(ctx, payload)
		if err != nil || body != nil || len(b) == 0 {
			return contentType, body, nil, err
		}
		return contentType, nil, b, nil
	}
	if h.awsFunc != nil {
		return h.invokerCType, nil, nil, callAWS(ctx, h.awsFunc, payload, out)
	}
	b, err := h.invoker.Invoke(ctx, payload)
	if err != nil || len(b) == 0 {
		return h.invokerCType, nil, nil, err
	}
	return h.invokerCType, nil, b, nil
}

// StreamInvoker is a lambda.Handler whose answer may be streamed. A
// wrapper implements it to pass on its handler's answer as it is,
// buffered or streamed, with its content type. New and Start call
// InvokeStream, never Invoke or ContentType. NewHandler's value is one, so
// a wrapper built on it calls its InvokeStream (package oteltrace does).
type StreamInvoker interface {
	lambda.Handler
	// InvokeStream runs one invocation, as Invoke does. It returns the
	// content type and either out, the bytes (fixed once returned), or
	// body, a reader to stream, unread (docs/streaming.md). Whoever gets
	// body reads it while ctx is live, then closes it if it is an
	// io.Closer. A wrapper ends its span when body ends. With an error,
	// out and body are nil.
	InvokeStream(ctx context.Context, payload []byte) (contentType string, out []byte, body io.Reader, err error)
}

// callAWS is aws-lambda-go's Invoke (handlerFunc.Invoke in v1.55.1) with
// the bytes copied into out before the reader is closed, which puts its
// buffer back.
func callAWS(ctx context.Context, fn func(context.Context, []byte) (io.Reader, error), payload []byte, out *Buffer) error {
	r, err := fn(ctx, payload)
	if err != nil || r == nil {
		return err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	_, err = io.Copy(out, r) // its buffer writes itself out (WriteTo)
	return err
}

// awsHandlerFunc returns, for aws-lambda-go's own lambda.Handler, the
// function it runs; nil for any other lambda.Handler. On a version whose
// shape differs from v1.55.1's (a *handlerOptions that embeds its
// handlerFunc; TestAWSHandlerFunc) it returns Invoke's bytes as a reader.
// They are copied as soon as Invoke returns, which narrows the race but
// cannot close it.
func awsHandlerFunc(h lambda.Handler) func(context.Context, []byte) (io.Reader, error) {
	type fnType = func(context.Context, []byte) (io.Reader, error)
	v := reflect.ValueOf(h)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	e := v.Elem()
	if t := e.Type(); t.PkgPath() != awsLambdaPkg || t.Name() != "handlerOptions" {
		return nil
	}
	if e.Kind() == reflect.Struct {
		f := e.FieldByName("handlerFunc")
		if f.IsValid() && f.Kind() == reflect.Func && f.Type().ConvertibleTo(reflect.TypeFor[fnType]()) && !f.IsNil() {
			// An unexported field: read through its address, as the
			// checks above allow.
			return *(*fnType)(unsafe.Pointer(f.UnsafeAddr()))
		}
	}
	return func(ctx context.Context, payload []byte) (io.Reader, error) {
		b, err := h.Invoke(ctx, payload)
		return bytes.NewReader(b), err
	}
}

const awsLambdaPkg = "github.com/aws/aws-lambda-go/lambda"

// invokerContentType: the value of lambda.NewHandler is run by
// aws-lambda-go as the function it wraps, whose JSON responses are sent as
// application/json. A lambda.Handler with a ContentType method answers
// that (a wrapper of NewHandler's says application/json). Other
// lambda.Handler objects answer bytes.
func invokerContentType(h lambda.Handler) string {
	if ct, ok := h.(interface{ ContentType() string }); ok {
		return ct.ContentType()
	}
	t := reflect.TypeOf(h)
	if t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "github.com/aws/aws-lambda-go/lambda" &&
		t.Elem().Name() == "handlerOptions" {
		return jsonContentType
	}
	return bytesContentType
}
