package lambdahttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// restEvent is a REST API event (payload 1.0) for method and target
// ("/p?q=v"), as the streamed integration sends it.
func restEvent(t testing.TB, ev *events.APIGatewayV2HTTPRequest) []byte {
	t.Helper()
	q := map[string][]string{}
	for _, kv := range strings.Split(ev.RawQueryString, "&") {
		if k, v, _ := strings.Cut(kv, "="); k != "" {
			q[k] = append(q[k], v)
		}
	}
	h := map[string][]string{}
	for k, v := range ev.Headers {
		h[k] = []string{v}
	}
	rest := events.APIGatewayProxyRequest{
		Resource: "/{proxy+}", Path: ev.RawPath, HTTPMethod: ev.RequestContext.HTTP.Method,
		MultiValueHeaders: h, MultiValueQueryStringParameters: q, Body: ev.Body, IsBase64Encoded: ev.IsBase64Encoded,
		RequestContext: events.APIGatewayProxyRequestContext{
			RequestID: "rc-1", Stage: "prod", DomainName: "id.execute-api.us-east-1.amazonaws.com", Protocol: "HTTP/1.1",
			Identity: events.APIGatewayRequestIdentity{SourceIP: "192.0.2.1"}, HTTPMethod: ev.RequestContext.HTTP.Method,
		},
	}
	b, err := json.Marshal(rest)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// proxyStreaming is what aws-lambda-go's APIGatewayProxyStreamingResponse
// streams for what h answers to r: a header of one value in Headers, of
// several in MultiValueHeaders, Set-Cookie's values in Cookies.
func proxyStreaming(t testing.TB, h http.Handler, payload []byte) []byte {
	t.Helper()
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	target := ev.Path
	if q := encodeSorted(ev.MultiValueQueryStringParameters); q != "" {
		target += "?" + q
	}
	body := ev.Body
	if ev.IsBase64Encoded {
		body = decodeB64(t, body)
	}
	r := httptest.NewRequest(ev.HTTPMethod, target, strings.NewReader(body))
	rec := &plainRecorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	res := &events.APIGatewayProxyStreamingResponse{StatusCode: rec.code, Body: bytes.NewReader(rec.body.Bytes())}
	for k, vs := range rec.header {
		switch {
		case k == "Set-Cookie":
			res.Cookies = vs
		case len(vs) == 1:
			if res.Headers == nil {
				res.Headers = map[string]string{}
			}
			res.Headers[k] = vs[0]
		default:
			if res.MultiValueHeaders == nil {
				res.MultiValueHeaders = map[string][]string{}
			}
			res.MultiValueHeaders[k] = vs
		}
	}
	b, err := io.ReadAll(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// plainRecorder records an answer as a handler writes it: unlike
// httptest's, it sniffs no Content-Type (a stream does not).
type plainRecorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (p *plainRecorder) Header() http.Header { return p.header }
func (p *plainRecorder) Flush()              {}
func (p *plainRecorder) WriteHeader(code int) {
	if p.code == 0 {
		p.code = code
	}
}

func (p *plainRecorder) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.body.Write(b)
}

// TestRESTStreamCompat: a REST API event through StreamingHandler is
// streamed, prelude, eight NULs and body, byte for byte as
// events.APIGatewayProxyStreamingResponse writes the same answer.
func TestRESTStreamCompat(t *testing.T) {
	for _, tc := range compatCases() {
		if tc.name == "echo request" { // its body is the request, checked by TestDoorRequests
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			p := restEvent(t, tc.ev)
			want := proxyStreaming(t, tc.h, p)
			ct, out, body, err := lambdahttp.StreamingHandler(tc.h).InvokeStream(context.Background(), p)
			if err != nil || body == nil || ct != lambdahttp.StreamContentType {
				t.Fatalf("not streamed: %q %.100q %v", ct, out, err)
			}
			var got bytes.Buffer
			if _, err := io.Copy(&got, body); err != nil { // WriteTo, as the runtime
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("stream differs from APIGatewayProxyStreamingResponse's:\n got %.300q\nwant %.300q", got.Bytes(), want)
			}
		})
	}
}

// TestStreamingHandlerBuffersOtherDoors: the doors that do not stream
// (HTTP APIs, load balancers) get from StreamingHandler the buffered
// answer Handler gives.
func TestStreamingHandlerBuffersOtherDoors(t *testing.T) {
	var got seen
	h := recorder(&got)
	for _, tc := range doorCases() {
		if tc.name == "REST" || tc.name == "REST encoded" || tc.name == "Function URL" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			ct, out, body, err := lambdahttp.StreamingHandler(h).InvokeStream(context.Background(), tc.payload(t))
			if err != nil || body != nil || ct != "application/json" {
				t.Fatalf("%q %v %v, want a buffered answer", ct, body, err)
			}
			status, _, b := clientView(t, shapeOf(t, tc.payload(t)), out)
			if status != http.StatusOK || b != "seen" {
				t.Errorf("%d %q", status, b)
			}
		})
	}
}
