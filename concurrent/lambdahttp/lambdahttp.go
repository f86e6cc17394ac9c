package lambdahttp

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent"
)

// Defaults of the options.
const (
	// DefaultMaxResponseBytes is the platform's bound on a buffered
	// answer (6 MiB) and the runtime's default LMIGO_MAX_RESPONSE_BYTES.
	DefaultMaxResponseBytes = 6 << 20
	// DefaultMaxHeaderBytes bounds the JSON head (status, headers,
	// cookies) the adapter builds.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxALBResponseBytes bounds an answer to a load balancer,
	// whose response JSON may not exceed 1 MB.
	DefaultMaxALBResponseBytes = 1 << 20
)

// StreamContentType is the content type of a streamed answer: the JSON
// head, eight NUL bytes, then the body.
const StreamContentType = "application/vnd.awslambda.http-integration-response"

// Option configures Handler and StreamingHandler.
type Option func(*options)

type options struct {
	maxResponse    int
	maxResponseSet bool // by WithMaxResponseBytes: for every door
	maxHeader      int
	text           func(contentType, contentEncoding string) bool
}

// WithMaxResponseBytes bounds a buffered answer, the whole JSON document
// as posted (body after base64 or JSON escaping included), at every door;
// n <= 0 keeps the defaults: DefaultMaxResponseBytes, and
// DefaultMaxALBResponseBytes for a load balancer. Set it to
// LMIGO_MAX_RESPONSE_BYTES when that is lowered, so that the client gets
// this package's 500 rather than the runtime's error. It bounds as well
// what a streamed answer's Read gathers (prelude and body); lmigo streams
// it through WriteTo, which it does not bound.
func WithMaxResponseBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxResponse, o.maxResponseSet = n, true
		}
	}
}

// WithText sets the rule that tells a text answer body, sent as a JSON
// string, from a binary one, sent in base64 with isBase64Encoded: text
// reports whether a body of that Content-Type and Content-Encoding is
// text. A body that is not valid UTF-8 goes in base64 whatever the rule
// says. nil keeps the default, [IsText]. Streamed answers are bytes and
// need no rule.
func WithText(text func(contentType, contentEncoding string) bool) Option {
	return func(o *options) {
		if text != nil {
			o.text = text
		}
	}
}

// cappedWriter passes writes on to w while they fit in room bytes; one
// that does not fit fails with ErrResponseTooLarge, and so does every
// later one.
type cappedWriter struct {
	w    io.Writer
	room int
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if len(p) > c.room {
		c.room = -1
		return 0, fmt.Errorf("%w: a stream read through Read", ErrResponseTooLarge)
	}
	n, err := c.w.Write(p)
	c.room -= n
	return n, err
}

// WithMaxHeaderBytes bounds the encoded JSON head (status code, headers,
// cookies) of buffered and streamed answers; n <= 0 keeps the default.
func WithMaxHeaderBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxHeader = n
		}
	}
}

func newOptions(opts []Option) options {
	o := options{maxResponse: DefaultMaxResponseBytes, maxHeader: DefaultMaxHeaderBytes, text: IsText}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Handler serves h for buffered invocations from every HTTP front door:
// API Gateway REST APIs and HTTP APIs (payload 1.0 and 2.0), Function
// URLs and Application Load Balancers, told apart by the shape of the
// event. The returned concurrent.RawHandler decodes the event from the
// payload and writes the answer, in the shape that door reads, into the
// runtime's buffer itself. A payload that is not an HTTP event fails the
// invocation with an *EventError.
func Handler(h http.Handler, opts ...Option) concurrent.RawHandler {
	o := newOptions(opts)
	return func(ctx context.Context, payload []byte, out *concurrent.Buffer) error {
		ev, err := decodeEvent(payload)
		if err != nil {
			return err
		}
		serveBuffered(ctx, &o, h, ev, out)
		return nil
	}
}

// serveBuffered serves ev through h and writes the answer into out.
func serveBuffered(ctx context.Context, o *options, h http.Handler, ev *event, out *concurrent.Buffer) {
	w := getBuffered(o, ev.door)
	defer putBuffered(w)
	r, err := newRequest(ctx, ev)
	if err != nil {
		w.fail(requestStatus(err), err.Error())
	} else {
		w.serve(ctx, h, r)
	}
	w.encode(ctx, out)
}

// StreamingHandler serves h for the front doors that stream: Function
// URLs in RESPONSE_STREAM mode and REST APIs whose integration streams
// (response transfer mode STREAM). The handler it returns is a
// concurrent.StreamInvoker: the reader it answers with writes the answer
// when the runtime streams it, h running inside its WriteTo on the
// runtime's worker, each chunk going out as h writes it (writes under
// 4 KiB are gathered up to 16 KiB or the next Flush). The doors that do
// not stream (HTTP APIs, load balancers) get their buffered answer.
func StreamingHandler(h http.Handler, opts ...Option) concurrent.StreamInvoker {
	return &streamer{opts: newOptions(opts), h: h}
}

type requestKey struct{}

// Request returns the payload 2.0 event (HTTP API 2.0, Function URL) of
// the invocation whose context (or the context of its *http.Request) ctx
// is, or nil. The handler may read it; it must not keep it after returning.
func Request(ctx context.Context) *events.APIGatewayV2HTTPRequest {
	if ev, _ := ctx.Value(requestKey{}).(*event); ev != nil && ev.door.v2() {
		return &ev.APIGatewayV2HTTPRequest
	}
	return nil
}

// ProxyRequest returns the payload 1.0 event (REST API, HTTP API 1.0) of
// the invocation whose context (or the context of its *http.Request) ctx
// is, or nil. The handler may read it; it must not keep it after returning.
func ProxyRequest(ctx context.Context) *events.APIGatewayProxyRequest {
	if ev, _ := ctx.Value(requestKey{}).(*event); ev != nil && ev.door.v1() {
		return &ev.proxy
	}
	return nil
}

// ALBRequest returns the load balancer's event of the invocation whose
// context (or the context of its *http.Request) ctx is, or nil. The
// handler may read it; it must not keep it after returning.
func ALBRequest(ctx context.Context) *events.ALBTargetGroupRequest {
	if ev, _ := ctx.Value(requestKey{}).(*event); ev != nil && ev.door.alb() {
		return &ev.alb
	}
	return nil
}
