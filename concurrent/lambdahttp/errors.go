package lambdahttp

import "errors"

var (
	// ErrEvent: the payload is not the event of an HTTP front door (API
	// Gateway REST or HTTP API, Function URL, Application Load Balancer).
	// The invocation fails with an *EventError that wraps it (a function
	// error): there is no request to answer.
	ErrEvent = errors.New("lambdahttp: payload is not an HTTP event")
	// ErrBodyEncoding: the request body is flagged base64 and is not. The
	// client gets 400.
	ErrBodyEncoding = errors.New("lambdahttp: request body is not valid base64")
	// ErrResponseTooLarge is returned by Write once a buffered body
	// exceeds what the answer can carry (the client gets 500), and by a
	// stream's Read and the handler's Write once the stream exceeds
	// WithMaxResponseBytes there.
	ErrResponseTooLarge = errors.New("lambdahttp: buffered response over the limit")
	// ErrHeaderTooLarge: the head (status, headers, cookies) exceeds
	// WithMaxHeaderBytes. The client gets 500.
	ErrHeaderTooLarge = errors.New("lambdahttp: response headers over the limit")
)

// EventError is the error an invocation fails with when its payload is not
// the event of an HTTP front door: errors.Is(err, ErrEvent) holds, and the
// error type the caller reads is "EventError". Reason says what was found
// (never a value of the payload); Err is the decoder's error, if any.
type EventError struct {
	Reason string
	Err    error
}

// Error says what was refused and why.
func (e *EventError) Error() string {
	msg := ErrEvent.Error() + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrEvent.
func (e *EventError) Is(target error) bool { return target == ErrEvent }

// Unwrap returns the decoder's error, if any.
func (e *EventError) Unwrap() error { return e.Err }
