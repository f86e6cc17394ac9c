package lambdahttp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// notHTTPEvents are payloads that no HTTP front door sends.
var notHTTPEvents = map[string]string{
	"SQS": `{"Records":[{"messageId":"059f36b4-87a3-44ab-83d2-661975830a7d","receiptHandle":"AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a",` +
		`"body":"test","attributes":{"ApproximateReceiveCount":"1"},"messageAttributes":{},"md5OfBody":"098f6bcd4621d373cade4e832627b4f6",` +
		`"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:us-east-2:123456789012:my-queue","awsRegion":"us-east-2"}]}`,
	"empty object": `{}`,
	"foo":          `{"foo":1}`,
	"array":        `[1,2]`,
	"string":       `"GET /"`,
	"null":         `null`,
	"not JSON":     `GET / HTTP/1.1`,
	"authorizer": `{"version":"2.0","type":"REQUEST","routeArn":"arn:aws:execute-api:us-east-1:123456789012:abcdef123/test/GET/request",` +
		`"rawPath":"/my/path","requestContext":{"http":{"method":"GET","path":"/my/path"}}}`,
	"WebSocket": `{"requestContext":{"routeKey":"$default","eventType":"MESSAGE","connectionId":"L2bZ4eUZoAMCJKg=","domainName":"id.execute-api.us-east-1.amazonaws.com"},` +
		`"body":"hello","isBase64Encoded":false}`,
}

// TestNotHTTPEvent: a payload that is not an HTTP event fails the
// invocation with ErrEvent, as a function error of type EventError, and
// never reaches the http.Handler.
func TestNotHTTPEvent(t *testing.T) {
	called := false
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })
	api := serve(t, 2, lambdahttp.Handler(h))
	for name, p := range notHTTPEvents {
		t.Run(name, func(t *testing.T) {
			called = false
			var out concurrent.Buffer
			err := lambdahttp.Handler(h)(context.Background(), []byte(p), &out)
			if !errors.Is(err, lambdahttp.ErrEvent) || called {
				t.Errorf("Handler: %v (handler called: %v), want ErrEvent", err, called)
			}
			_, _, body, err := lambdahttp.StreamingHandler(h).InvokeStream(context.Background(), []byte(p))
			if !errors.Is(err, lambdahttp.ErrEvent) || body != nil || called {
				t.Errorf("StreamingHandler: %v (handler called: %v), want ErrEvent", err, called)
			}
			if ee := (*lambdahttp.EventError)(nil); !errors.As(err, &ee) || strings.Contains(ee.Reason, "GET") {
				t.Errorf("StreamingHandler: %v, want an *EventError whose reason quotes nothing", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(p)})
			if err != nil || r.Err == nil || r.Err.Type != "EventError" || called {
				t.Errorf("through the runtime: %v %+v (handler called: %v), want an EventError", err, r, called)
			}
		})
	}
}
