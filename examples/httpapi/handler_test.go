package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

// event reads a testdata event and lets the test change it.
func event(t *testing.T, name string, change func(*events.APIGatewayV2HTTPRequest)) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if change == nil {
		return raw
	}
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	change(&req)
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func response(t *testing.T, r lambdatest.Result) events.APIGatewayV2HTTPResponse {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("function error: %v", r.Err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(r.Payload, &resp); err != nil {
		t.Fatalf("response %s: %v", r.Payload, err)
	}
	return resp
}

// TestRoutes sends an HTTP API event and a function URL event as Lambda
// delivers them, and variants of them, through the runtime.
func TestRoutes(t *testing.T) {
	f := lambdatest.Start(t, handle, lambdatest.WithConcurrency(4))
	tests := []struct {
		name        string
		payload     []byte
		status      int
		contentType string
		check       func(t *testing.T, r lambdatest.Result, resp events.APIGatewayV2HTTPResponse)
	}{
		{
			name: "http api GET /hello", payload: event(t, "http-api-get-hello.json", nil),
			status: http.StatusOK, contentType: "application/json",
			check: func(t *testing.T, r lambdatest.Result, resp events.APIGatewayV2HTTPResponse) {
				var g greeting
				if err := json.Unmarshal([]byte(resp.Body), &g); err != nil {
					t.Fatal(err)
				}
				if g.Message != "hello, Gopher" || g.RequestID != r.RequestID || g.Served < 1 {
					t.Errorf("greeting %+v, want hello, Gopher for request %s", g, r.RequestID)
				}
			},
		},
		{
			name: "http api GET /hello without a name",
			payload: event(t, "http-api-get-hello.json", func(e *events.APIGatewayV2HTTPRequest) {
				e.RawQueryString, e.QueryStringParameters = "", nil
			}),
			status: http.StatusOK, contentType: "application/json",
			check: func(t *testing.T, _ lambdatest.Result, resp events.APIGatewayV2HTTPResponse) {
				var g greeting
				if err := json.Unmarshal([]byte(resp.Body), &g); err != nil || g.Message != "hello, world" {
					t.Errorf("body %s, want hello, world", resp.Body)
				}
			},
		},
		{
			name: "function url POST /echo, base64 body", payload: event(t, "function-url-post-echo.json", nil),
			status: http.StatusOK, contentType: "image/png",
			check: func(t *testing.T, _ lambdatest.Result, resp events.APIGatewayV2HTTPResponse) {
				var req events.LambdaFunctionURLRequest
				if err := json.Unmarshal(event(t, "function-url-post-echo.json", nil), &req); err != nil {
					t.Fatal(err)
				}
				if !resp.IsBase64Encoded || resp.Body != req.Body {
					t.Errorf("echo %q (base64 %v), want %q (base64)", resp.Body, resp.IsBase64Encoded, req.Body)
				}
			},
		},
		{
			name: "function url POST /echo, broken base64",
			payload: event(t, "function-url-post-echo.json", func(e *events.APIGatewayV2HTTPRequest) {
				e.Body = "not*base64"
			}),
			status: http.StatusBadRequest, contentType: "application/json",
		},
		{
			name: "unknown route",
			payload: event(t, "http-api-get-hello.json", func(e *events.APIGatewayV2HTTPRequest) {
				e.RawPath, e.RequestContext.HTTP.Path = "/nope", "/nope"
			}),
			status: http.StatusNotFound, contentType: "application/json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Invoke(tt.payload)
			resp := response(t, r)
			if resp.StatusCode != tt.status || resp.Headers["Content-Type"] != tt.contentType {
				t.Fatalf("status %d, content type %q; want %d, %q (body %s)",
					resp.StatusCode, resp.Headers["Content-Type"], tt.status, tt.contentType, resp.Body)
			}
			if tt.check != nil {
				tt.check(t, r, resp)
			}
		})
	}
}

// TestConcurrentRequests: many requests at once, N = 8, each answered
// with its own name and request ID, and the shared counter never loses
// or repeats a count.
func TestConcurrentRequests(t *testing.T) {
	const n, total = 8, 200
	f := lambdatest.Start(t, handle, lambdatest.WithConcurrency(n))
	payloads := make([][]byte, total)
	for i := range payloads {
		name := fmt.Sprintf("caller-%d", i)
		payloads[i] = event(t, "http-api-get-hello.json", func(e *events.APIGatewayV2HTTPRequest) {
			e.RawQueryString, e.QueryStringParameters = "name="+name, map[string]string{"name": name}
		})
	}
	var (
		mu     sync.Mutex
		counts = map[int64]bool{}
		wg     sync.WaitGroup
	)
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < total; i += 32 {
				g, r, err := hello(f, payloads[i])
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				if want := fmt.Sprintf("hello, caller-%d", i); g.Message != want || g.RequestID != r.RequestID {
					t.Errorf("request %d got %+v (request ID %s)", i, g, r.RequestID)
				}
				mu.Lock()
				if counts[g.Served] {
					t.Errorf("count %d served twice", g.Served)
				}
				counts[g.Served] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(counts) != total {
		t.Fatalf("%d counts, want %d", len(counts), total)
	}
}

// hello invokes GET /hello; it is safe to call from any goroutine.
func hello(f *lambdatest.Function, payload []byte) (greeting, lambdatest.Result, error) {
	r := f.Invoke(payload)
	if r.Err != nil {
		return greeting{}, r, r.Err
	}
	var resp events.APIGatewayV2HTTPResponse
	var g greeting
	if err := json.Unmarshal(r.Payload, &resp); err != nil {
		return g, r, err
	}
	if resp.StatusCode != http.StatusOK {
		return g, r, fmt.Errorf("status %d: %s", resp.StatusCode, resp.Body)
	}
	return g, r, json.Unmarshal([]byte(resp.Body), &g)
}

// TestIsolation: each greeting is the same served alone or beside 15
// others. Its served count is shared on purpose and differs; the check
// compares the rest.
func TestIsolation(t *testing.T) {
	evs := make([][]byte, 16)
	for i := range evs {
		name := fmt.Sprintf("caller-%d", i)
		evs[i] = event(t, "http-api-get-hello.json", func(e *events.APIGatewayV2HTTPRequest) {
			e.RawQueryString, e.QueryStringParameters = "name="+name, map[string]string{"name": name}
		})
	}
	servedCount := regexp.MustCompile(`\\"served\\":\d+`)
	lambdatest.CheckIsolation(t, handle, evs, lambdatest.WithNormalize(func(_, answer []byte) []byte {
		return servedCount.ReplaceAll(answer, nil)
	}))
}
