package lambdahttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// newRequest builds the *http.Request of an event, as a server would have
// read it: its context is ctx (the invocation's) carrying ev for Request.
// The error, for a body that is not the base64 it claims or a path that
// does not parse, is answered 400.
func newRequest(ctx context.Context, e *event) (*http.Request, error) {
	ctx = context.WithValue(ctx, requestKey{}, e)
	ev := &e.APIGatewayV2HTTPRequest
	rc := &ev.RequestContext
	if rc.HTTP.Method == "" {
		return nil, errNoMethod
	}
	path := ev.RawPath
	if path == "" {
		path = "/"
	}
	uri := path
	if ev.RawQueryString != "" {
		uri += "?" + ev.RawQueryString
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, fmt.Errorf("lambdahttp: request path: %w", err)
	}
	u.Scheme, u.Host = "https", rc.DomainName

	r := &http.Request{
		Method:     rc.HTTP.Method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     make(http.Header, len(ev.Headers)+1),
		Host:       rc.DomainName,
		RemoteAddr: rc.HTTP.SourceIP,
		RequestURI: uri,
	}
	if p := rc.HTTP.Protocol; p != "" {
		if major, minor, ok := http.ParseHTTPVersion(p); ok {
			r.Proto, r.ProtoMajor, r.ProtoMinor = p, major, minor
		}
	}
	for k, v := range ev.Headers {
		r.Header.Add(k, v)
	}
	if h := r.Header.Get("Host"); h != "" {
		r.Host = h
	}
	// Format 2.0 moves the Cookie header into the cookies array.
	if len(ev.Cookies) > 0 && r.Header.Get("Cookie") == "" {
		r.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}

	body, n, err := requestBody(ev)
	if err != nil {
		return nil, err
	}
	r.ContentLength, r.Body = int64(n), body
	return r.WithContext(ctx), nil
}

// errNoMethod: an HTTP event without its method (a hand-made one, or one
// missing its requestContext).
var errNoMethod = errors.New("lambdahttp: the event has no HTTP method")

// requestBody is the body of an event and its length, decoded from
// base64 when flagged. A text body is read from the event's string, not
// copied.
func requestBody(ev *events.APIGatewayV2HTTPRequest) (io.ReadCloser, int, error) {
	if ev.Body == "" {
		return http.NoBody, 0, nil
	}
	if !ev.IsBase64Encoded {
		return io.NopCloser(strings.NewReader(ev.Body)), len(ev.Body), nil
	}
	b, err := base64.StdEncoding.AppendDecode(nil, []byte(ev.Body))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrBodyEncoding, err)
	}
	if len(b) == 0 {
		return http.NoBody, 0, nil
	}
	return io.NopCloser(bytes.NewReader(b)), len(b), nil
}
