package lambdahttp

import "errors"

var (
	// ErrEvent: the payload is not an API Gateway HTTP API or Function
	// URL event. The invocation fails with it (a function error): there is
	// no request to answer.
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
