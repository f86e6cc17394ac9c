package lambdahttp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// hostileCases are events no front door sends as they are, each with the
// status its client must read: never a crash, a hang or a function error.
func hostileCases(t testing.TB) []struct {
	name   string
	p      []byte
	status int
	body   string // a part of the body
	tooBig bool   // the runtime refuses the payload: Runtime.RequestTooLarge
} {
	big := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("0123456789abcdef", 6<<20/4*3/16))) // 6 MiB of base64
	under := big[:6<<20-4<<10]                                                                         // a payload under the runtime's bound
	many := func(n, size int) map[string]string {
		h := make(map[string]string, n)
		for i := range n {
			h["x-h-"+strconv.Itoa(i)] = strings.Repeat("v", size)
		}
		return h
	}
	v2 := func(body string, b64 bool, headers map[string]string) []byte {
		ev := event("POST", "/echo", body, headers)
		ev.IsBase64Encoded = b64
		return payload(t, ev)
	}
	rest := func(body string, b64 bool) []byte {
		b, _ := json.Marshal(map[string]any{"httpMethod": "POST", "path": "/echo", "body": body, "isBase64Encoded": b64,
			"requestContext": map[string]any{"identity": map[string]any{"sourceIp": "192.0.2.1"}}})
		return b
	}
	alb := func(body string, b64 bool) []byte {
		b, _ := json.Marshal(map[string]any{"httpMethod": "POST", "path": "/echo", "body": body, "isBase64Encoded": b64,
			"requestContext": map[string]any{"elb": map[string]any{"targetGroupArn": "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/t/1"}}})
		return b
	}
	return []struct {
		name   string
		p      []byte
		status int
		body   string
		tooBig bool
	}{
		{"2.0 6 MiB base64 body", v2(big, true, nil), 200, "body 4718592", true},
		{"REST 6 MiB base64 body", rest(big, true), 200, "body 4718592", true},
		{"ALB 6 MiB base64 body", alb(big, true), 200, "body 4718592", true},
		{"2.0 base64 body under 6 MiB", v2(under, true, nil), 200, "body 4715520", false},
		{"REST base64 body under 6 MiB", rest(under, true), 200, "body 4715520", false},
		{"ALB base64 body under 6 MiB", alb(under, true), 200, "body 4715520", false},
		{"2.0 invalid base64", v2("not base64!", true, nil), 400, "base64", false},
		{"REST invalid base64", rest("not base64!", true), 400, "base64", false},
		{"ALB invalid base64", alb("not base64!", true), 400, "base64", false},
		{"5,000 headers", v2("", false, many(5000, 8)), 200, "headers 5000", false},
		{"headers over 1 MiB", v2("", false, many(5000, 256)), 431, "header", false},
		{"2.0 missing requestContext", []byte(`{"version":"2.0","rawPath":"/echo","headers":{"a":"b"}}`), 400, "no HTTP method", false},
		{"REST missing requestContext", []byte(`{"httpMethod":"GET","path":"/echo"}`), 200, "body 0", false},
		{"REST null requestContext", []byte(`{"httpMethod":"GET","path":"/echo","requestContext":null}`), 200, "body 0", false},
		{"REST path without /", []byte(`{"httpMethod":"GET","path":"echo","requestContext":{}}`), 400, "path", false},
		{"REST path with control byte", []byte(`{"httpMethod":"GET","path":"/e\u0000cho","requestContext":{}}`), 400, "path", false},
		{"ALB path bad escape", []byte(`{"httpMethod":"GET","path":"/100%","requestContext":{"elb":{}}}`), 400, "path", false},
		{"Function URL bad escape", []byte(`{"version":"2.0","rawPath":"/100%zz","requestContext":{"domainName":"x.lambda-url.us-east-1.on.aws","http":{"method":"GET"}}}`), 400, "path", false},
		{"5,000 query values", []byte(`{"httpMethod":"GET","path":"/echo","multiValueQueryStringParameters":{"q":[` + strings.TrimSuffix(strings.Repeat(`"v",`, 5000), ",") + `]},"requestContext":{}}`), 200, "query 5000", false},
	}
}

// echoSizes answers what it read: body bytes, header lines, query values.
var echoSizes = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	n, _ := io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "body %d headers %d query %d", n, len(r.Header), len(r.URL.Query()["q"]))
})

// TestHostileRequests: each hostile event gets an answer with the status
// its client must read, through Handler, StreamingHandler and the runtime.
func TestHostileRequests(t *testing.T) {
	api := serve(t, 4, lambdahttp.Handler(echoSizes))
	for _, tc := range hostileCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := clientReads(t, echoSizes, tc.p)
			if status != tc.status || !strings.Contains(body, tc.body) {
				t.Errorf("Handler: %d %.200q, want %d with %q", status, body, tc.status, tc.body)
			}
			if _, err := lambdahttp.StreamingHandler(echoSizes).Invoke(context.Background(), tc.p); err != nil {
				t.Errorf("StreamingHandler: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			r, err := api.Invoke(ctx, rapitest.Request{Payload: tc.p})
			if tc.tooBig {
				if err != nil || r.Err == nil || r.Err.Type != "Runtime.RequestTooLarge" {
					t.Errorf("runtime: %v %+v, want Runtime.RequestTooLarge", err, r.Err)
				}
				return
			}
			if err != nil || r.Err != nil {
				t.Fatalf("runtime: %v %+v", err, r.Err)
			}
			if status, _, _ := clientView(t, shapeOf(t, tc.p), r.Body); status != tc.status {
				t.Errorf("runtime: %d, want %d", status, tc.status)
			}
		})
	}
}

// TestALBAnswerBound: a load balancer's answer is bounded at 1 MiB, its
// platform's bound (a 500 that says so), an API Gateway's at 6 MiB; the
// option sets one bound for every door.
func TestALBAnswerBound(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strings.Repeat("x", 1536<<10))
	})
	for _, tc := range []struct {
		door   string
		opts   []lambdahttp.Option
		status int
	}{
		{"ALB", nil, 500}, {"ALB multi", nil, 500}, {"REST", nil, 200}, {"2.0", nil, 200},
		{"ALB", []lambdahttp.Option{lambdahttp.WithMaxResponseBytes(2 << 20)}, 200},
		{"REST", []lambdahttp.Option{lambdahttp.WithMaxResponseBytes(1 << 20)}, 500},
	} {
		t.Run(fmt.Sprint(tc.door, len(tc.opts)), func(t *testing.T) {
			status, _, body := clientReads(t, h, benchEvent(t, tc.door), tc.opts...)
			if status != tc.status || status == 500 && !strings.Contains(body, "over") {
				t.Errorf("%d %.100q, want %d", status, body, tc.status)
			}
		})
	}
}
