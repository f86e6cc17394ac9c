package concurrent

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/concurrent/internal/errordoc"
)

// writeErrorBody writes the JSON body that reports err to the Runtime API
// into out, which must be empty, and returns the error type to send with
// it. The body is the one aws-lambda-go sends for the same error:
//
//   - a messages.InvokeResponse_Error value is sent as it is;
//   - a *PanicError is sent with the panic value's message and type and the
//     panicking stack;
//   - any other error with its message and the name of its type (of the
//     pointed-to type for a pointer).
//
// A panic in err's Error method is reported as a panic, not passed on.
func writeErrorBody(out *Buffer, err error) (errorType string) {
	defer func() {
		if v := recover(); v != nil {
			out.Reset()
			errorType = errordoc.Encode(out, panicBody(newPanicError(v)))
		}
	}()
	return errordoc.Encode(out, errorBody(err))
}

// eventError is an event that did not decode into the handler's type. It
// is the handler adapter's error to the runtime. The runtime logs it
// without the decoder's message (logMessage), and sends err as
// aws-lambda-go sends it.
// It never leaves the package: handler.call returns err itself.
type eventError struct {
	err  error
	into reflect.Type
}

func (e *eventError) Error() string { return e.err.Error() }
func (e *eventError) Unwrap() error { return e.err }

// unwrapEvent returns the decoder's error of an eventError, else err.
func unwrapEvent(err error) error {
	if ee, ok := err.(*eventError); ok { //nolint:errorlint // the handler adapter returns it unwrapped
		return ee.err
	}
	return err
}

func errorBody(err error) *messages.InvokeResponse_Error {
	err = unwrapEvent(err)
	// Only the value itself, not one wrapped, is passed through as in
	// aws-lambda-go.
	if ive, ok := err.(messages.InvokeResponse_Error); ok { //nolint:errorlint // see above
		return &ive
	}
	if pe := (*PanicError)(nil); errors.As(err, &pe) {
		return panicBody(pe)
	}
	if err == nil {
		return &messages.InvokeResponse_Error{Message: "<nil>"}
	}
	return &messages.InvokeResponse_Error{Message: err.Error(), Type: errordoc.TypeName(err)}
}

func panicBody(pe *PanicError) *messages.InvokeResponse_Error {
	if ive, ok := pe.Value.(messages.InvokeResponse_Error); ok {
		return &ive
	}
	return &messages.InvokeResponse_Error{
		Message:    fmt.Sprintf("%v", pe.Value),
		Type:       errordoc.TypeName(pe.Value),
		StackTrace: errordoc.StackTrace(pe.Stack, maxPanicFrames),
	}
}

// writeErrorDoc writes the error document for err into out, which must be
// empty, and returns the error type. It is writeErrorBody's document when
// that has at most limit bytes (maxErrorBody for an /error,
// rapi.MaxStreamErrorBody for a stream's trailer). Otherwise errordoc.Fit
// cuts it to fit. It drops the stack trace, cuts the type to
// maxDocErrorType, and cuts the message (marked "...") as little as needed.
func writeErrorDoc(out *Buffer, err error, limit int) string {
	errorType := writeErrorBody(out, err)
	if len(out.B) > limit {
		errordoc.Fit(out, limit, maxDocErrorType)
	}
	return errorType
}
