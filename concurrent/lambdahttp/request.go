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
	"slices"
	"strings"
)

var (
	// errNoMethod: an HTTP event without its method (a hand-made one, or
	// one missing its requestContext).
	errNoMethod = errors.New("lambdahttp: the event has no HTTP method")
	// errHeaderFields: the request line and headers exceed
	// maxRequestHeaderBytes; answered 431, as net/http.Server answers.
	errHeaderFields = fmt.Errorf("lambdahttp: request headers over %d bytes", maxRequestHeaderBytes)
)

// maxRequestHeaderBytes bounds a request's line and headers, as
// net/http.Server's default MaxHeaderBytes does. The doors' own bounds
// are far lower (10 KiB for API Gateway, 64 KiB for a load balancer);
// only an event made by hand goes past them.
const maxRequestHeaderBytes = http.DefaultMaxHeaderBytes

// requestStatus is the status a request that could not be built is
// answered with.
func requestStatus(err error) int {
	if errors.Is(err, errHeaderFields) {
		return http.StatusRequestHeaderFieldsTooLarge
	}
	return http.StatusBadRequest
}

// newRequest builds the *http.Request of an event, as net/http.Server
// would have read the request the door passes on: its context is ctx
// (the invocation's) carrying e for Request, ProxyRequest and ALBRequest.
// The error, for a body that is not the base64 it claims or a path that
// does not parse, is answered 400.
func newRequest(ctx context.Context, e *event) (*http.Request, error) {
	rc := &e.RequestContext
	r := &http.Request{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	var path, proto, rawQuery string
	decoded := false // the door passes the path percent-decoded
	switch {
	case e.door.v2():
		r.Method, path, proto, r.RemoteAddr = rc.HTTP.Method, e.RawPath, rc.HTTP.Protocol, rc.HTTP.SourceIP
		decoded, rawQuery = e.door == doorHTTPv2, e.RawQueryString
		r.Header = make(http.Header, len(e.Headers)+1)
		for k, v := range e.Headers {
			r.Header.Add(k, v)
		}
		// Format 2.0 moves the Cookie header into the cookies array.
		if len(e.Cookies) > 0 && r.Header.Get("Cookie") == "" {
			r.Header.Set("Cookie", strings.Join(e.Cookies, "; "))
		}
	case e.door.v1():
		r.Method, path, proto, r.RemoteAddr = e.HTTPMethod, e.Path, rc.Protocol, rc.Identity.SourceIP
		decoded = e.door == doorHTTPv1
		rawQuery = encodeQuery(e.MultiValueQueryStringParameters, e.QueryStringParameters, true)
		r.Header = newHeader(e.MultiValueHeaders, e.Headers)
	default: // ALB
		r.Method, path = e.HTTPMethod, e.Path
		// The load balancer passes the query as the client sent it, encoded.
		rawQuery = encodeQuery(e.MultiValueQueryStringParameters, e.QueryStringParameters, false)
		r.Header = newHeader(e.MultiValueHeaders, e.Headers)
		r.RemoteAddr = lastForwardedFor(r.Header)
	}
	if r.Method == "" {
		return nil, errNoMethod
	}
	if headerBytes(r.Header, len(r.Method)+len(path)+len(rawQuery)) > maxRequestHeaderBytes {
		return nil, errHeaderFields
	}
	if proto != "" {
		if major, minor, ok := http.ParseHTTPVersion(proto); ok {
			r.Proto, r.ProtoMajor, r.ProtoMinor = proto, major, minor
		}
	}
	// net/http.Server moves the Host header into Request.Host.
	r.Host = r.Header.Get("Host")
	delete(r.Header, "Host")
	if r.Host == "" {
		r.Host = rc.DomainName
	}

	u, err := requestURL(path, decoded)
	if err != nil {
		return nil, err
	}
	u.Scheme, u.Host, u.RawQuery = "https", r.Host, rawQuery
	if e.door.alb() && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "http") {
		u.Scheme = "http"
	}
	r.URL, r.RequestURI = u, u.RequestURI()

	body, n, err := requestBody(e.Body, e.IsBase64Encoded)
	if err != nil {
		return nil, err
	}
	r.ContentLength, r.Body = int64(n), body
	return r.WithContext(context.WithValue(ctx, requestKey{}, e)), nil
}

// headerBytes is the size of h's lines on the wire ("Name: value\r\n"),
// plus n.
func headerBytes(h http.Header, n int) int {
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// requestURL is the URL of a request path. A door that passes it encoded
// (REST APIs, Function URLs, load balancers) has it parsed as net/http
// parses a request line; one that passes it decoded (HTTP APIs) has it
// taken as the path itself, a literal % or space included.
func requestURL(path string, decoded bool) (*url.URL, error) {
	if path == "" {
		path = "/"
	}
	if path[0] != '/' {
		return nil, errors.New("lambdahttp: request path does not begin with /")
	}
	if decoded {
		return &url.URL{Path: path}, nil
	}
	if strings.IndexByte(path, '?') >= 0 {
		return nil, errors.New("lambdahttp: request path holds a ?")
	}
	u, err := url.ParseRequestURI(path)
	if err != nil {
		return nil, fmt.Errorf("lambdahttp: request path: %w", err)
	}
	return u, nil
}

// newHeader is the header of a payload 1.0 or ALB event: its
// multi-value headers when it has them, else its headers.
func newHeader(multi map[string][]string, single map[string]string) http.Header {
	if multi != nil {
		h := make(http.Header, len(multi))
		for k, vs := range multi {
			k = http.CanonicalHeaderKey(k)
			h[k] = append(h[k], vs...)
		}
		return h
	}
	h := make(http.Header, len(single))
	for k, v := range single {
		h.Add(k, v)
	}
	return h
}

// encodeQuery is the query string of a payload 1.0 or ALB event: its
// multi-value parameters when it has them, else its parameters, keys in
// order (a map has none of its own), each key's values in the order sent.
// escape: the door decoded the names and values (API Gateway); a load
// balancer passes them as sent.
func encodeQuery(multi map[string][]string, single map[string]string, escape bool) string {
	n := max(len(multi), len(single))
	if n == 0 {
		return ""
	}
	keys := make([]string, 0, n)
	if multi != nil {
		for k := range multi {
			keys = append(keys, k)
		}
	} else {
		for k := range single {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		if escape {
			k, v = url.QueryEscape(k), url.QueryEscape(v)
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	for _, k := range keys {
		if multi != nil {
			for _, v := range multi[k] {
				add(k, v)
			}
		} else {
			add(k, single[k])
		}
	}
	return b.String()
}

// lastForwardedFor is the address a load balancer appended to
// X-Forwarded-For: the client's that connected to it.
func lastForwardedFor(h http.Header) string {
	vs := h["X-Forwarded-For"]
	if len(vs) == 0 {
		return ""
	}
	v := vs[len(vs)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// requestBody is the body of an event and its length, decoded from
// base64 when flagged. A text body is read from the event's string, not
// copied.
func requestBody(s string, isBase64 bool) (io.ReadCloser, int, error) {
	if s == "" {
		return http.NoBody, 0, nil
	}
	if !isBase64 {
		return io.NopCloser(strings.NewReader(s)), len(s), nil
	}
	b, err := base64.StdEncoding.AppendDecode(nil, []byte(s))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrBodyEncoding, err)
	}
	if len(b) == 0 {
		return http.NoBody, 0, nil
	}
	return io.NopCloser(bytes.NewReader(b)), len(b), nil
}
