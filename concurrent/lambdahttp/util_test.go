package lambdahttp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// event is a format 2.0 event for method and target ("/p?q").
func event(method, target, body string, headers map[string]string) *events.APIGatewayV2HTTPRequest {
	path, query, _ := strings.Cut(target, "?")
	ev := &events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: path, RawQueryString: query,
		Headers: map[string]string{"host": "id.lambda-url.us-east-1.on.aws"},
		Body:    body,
	}
	for k, v := range headers {
		ev.Headers[k] = v
	}
	ev.RequestContext.DomainName = "id.lambda-url.us-east-1.on.aws"
	ev.RequestContext.RequestID = "rc-1"
	ev.RequestContext.HTTP = events.APIGatewayV2HTTPRequestContextHTTPDescription{
		Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1",
	}
	return ev
}

func payload(t testing.TB, ev *events.APIGatewayV2HTTPRequest) []byte {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveBuffered runs Handler(h) on ev as the runtime would and decodes
// its answer.
func serveBuffered(t testing.TB, h http.Handler, ev *events.APIGatewayV2HTTPRequest, opts ...lambdahttp.Option) (events.APIGatewayV2HTTPResponse, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out concurrent.Buffer
	if err := lambdahttp.Handler(h, opts...)(ctx, payload(t, ev), &out); err != nil {
		t.Fatal(err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out.B, &resp); err != nil {
		t.Fatalf("answer is not JSON: %v: %.200q", err, out.B)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	return resp, body
}

// serveStream runs StreamingHandler(h) on ev and returns the whole stream
// and the error that ended it, through WriteTo as the runtime reads it.
func serveStream(t testing.TB, h http.Handler, ev *events.APIGatewayV2HTTPRequest, opts ...lambdahttp.Option) ([]byte, error) {
	t.Helper()
	r, err := streamBody(h, payload(t, ev), opts...)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_, err = io.Copy(&b, r) // WriteTo
	return b.Bytes(), err
}

// splitStream splits a stream into its JSON head and body.
func splitStream(t testing.TB, b []byte) (head map[string]any, body []byte) {
	t.Helper()
	i := bytes.Index(b, make([]byte, 8))
	if i < 0 {
		t.Fatalf("no prelude end in %.200q", b)
	}
	if err := json.Unmarshal(b[:i], &head); err != nil {
		t.Fatalf("head %q: %v", b[:i], err)
	}
	return head, b[i+8:]
}

func lambdahttpStream(h http.Handler, ev *events.APIGatewayV2HTTPRequest) (io.Reader, error) {
	p, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	return streamBody(h, p)
}

// streamBody runs StreamingHandler(h) on payload as the runtime does and
// returns the stream, unread; an error if it answered buffered.
func streamBody(h http.Handler, payload []byte, opts ...lambdahttp.Option) (io.Reader, error) {
	ct, _, body, err := lambdahttp.StreamingHandler(h, opts...).InvokeStream(context.Background(), payload)
	if err != nil {
		return nil, err
	}
	if body == nil || ct != lambdahttp.StreamContentType {
		return nil, fmt.Errorf("answered buffered (%q), not streamed", ct)
	}
	return body, nil
}

// benchEvent is the small POST of the benchmarks as door sends it: "2.0",
// "REST", "ALB" or "ALB multi" (testdata/events/bench-*.json).
func benchEvent(t testing.TB, door string) []byte {
	t.Helper()
	switch door {
	case "2.0":
		return payload(t, event("POST", "/bench?x=1", `{"hello":"world"}`, map[string]string{"content-type": "application/json"}))
	case "REST":
		return ownEvent(t, "bench-rest.json")
	case "ALB":
		return ownEvent(t, "bench-alb.json")
	case "ALB multi":
		return ownEvent(t, "bench-alb-multi.json")
	}
	t.Fatalf("no door %q", door)
	return nil
}

// encodeSorted encodes q as url.Values does, keys sorted.
func encodeSorted(q map[string][]string) string { return url.Values(q).Encode() }

func decodeB64(t testing.TB, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// doors names every front door and mode doorEvent makes events for.
var doors = []string{"REST", "HTTP API 1.0", "HTTP API 2.0", "Function URL", "ALB", "ALB multi"}

// doorEvent is an event of door for method, path, one query parameter
// id and body (base64 when b64), with the header X-Req: id.
func doorEvent(t testing.TB, door, method, path, id, body string, b64 bool) []byte {
	t.Helper()
	if b64 {
		body = base64.StdEncoding.EncodeToString([]byte(body))
	}
	var ev map[string]any
	switch door {
	case "REST", "HTTP API 1.0":
		ev = map[string]any{
			"resource": "/{proxy+}", "path": path, "httpMethod": method, "body": body, "isBase64Encoded": b64,
			"headers":                         map[string]string{"Host": "id.execute-api.us-east-1.amazonaws.com", "X-Req": id},
			"multiValueHeaders":               map[string][]string{"Host": {"id.execute-api.us-east-1.amazonaws.com"}, "X-Req": {id}},
			"queryStringParameters":           map[string]string{"id": id},
			"multiValueQueryStringParameters": map[string][]string{"id": {id}},
			"requestContext": map[string]any{"requestId": "rc-" + id, "stage": "prod", "protocol": "HTTP/1.1", "httpMethod": method,
				"domainName": "id.execute-api.us-east-1.amazonaws.com", "identity": map[string]string{"sourceIp": "192.0.2.1"}},
		}
		if door == "HTTP API 1.0" {
			ev["version"] = "1.0"
		}
	case "HTTP API 2.0", "Function URL":
		domain := "id.execute-api.us-east-1.amazonaws.com"
		if door == "Function URL" {
			domain = "id.lambda-url.us-east-1.on.aws"
		}
		ev = map[string]any{
			"version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "id=" + id,
			"headers": map[string]string{"host": domain, "x-req": id}, "body": body, "isBase64Encoded": b64,
			"requestContext": map[string]any{"requestId": "rc-" + id, "domainName": domain,
				"http": map[string]string{"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1"}},
		}
	case "ALB", "ALB multi":
		ev = map[string]any{
			"httpMethod": method, "path": path, "body": body, "isBase64Encoded": b64,
			"requestContext": map[string]any{"elb": map[string]string{"targetGroupArn": "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/t/1"}},
		}
		if door == "ALB" {
			ev["headers"] = map[string]string{"host": "alb.example.com", "x-req": id, "x-forwarded-for": "192.0.2.1"}
			ev["queryStringParameters"] = map[string]string{"id": id}
		} else {
			ev["multiValueHeaders"] = map[string][]string{"host": {"alb.example.com"}, "x-req": {id}, "x-forwarded-for": {"192.0.2.1"}}
			ev["multiValueQueryStringParameters"] = map[string][]string{"id": {id}}
		}
	default:
		t.Fatalf("no door %q", door)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAnswer is what the client of payload's door reads of a runtime's
// answer: the buffered document, or the stream's prelude and body.
func readAnswer(t testing.TB, payload []byte, r rapitest.Result) (int, http.Header, string) {
	t.Helper()
	if r.ContentType != lambdahttp.StreamContentType {
		return clientView(t, shapeOf(t, payload), r.Body)
	}
	head, body := splitStream(t, r.Body)
	h := http.Header{}
	for _, m := range []string{"headers", "multiValueHeaders"} {
		hm, _ := head[m].(map[string]any)
		for k, v := range hm {
			switch v := v.(type) {
			case string:
				h.Add(k, v)
			case []any:
				h[k] = anyStrings(v)
			}
		}
	}
	h["Set-Cookie"] = anyStrings(head["cookies"])
	code, _ := head["statusCode"].(float64)
	return int(code), h, string(body)
}

// panicRound is eight GET events of door, /ok/{i} but the one at round,
// /panic.
func panicRound(t testing.TB, door string, round int) [][]byte {
	ps := make([][]byte, 8)
	for i := range ps {
		path := fmt.Sprintf("/ok/%d", i)
		if i == round {
			path = "/panic"
		}
		ps[i] = doorEvent(t, door, "GET", path, fmt.Sprint(i), "", false)
	}
	return ps
}
