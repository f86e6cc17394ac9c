// Command httpapi is an Amazon API Gateway HTTP API handler (payload
// format 2.0) served by lmigo. A Lambda function URL sends the same event
// and takes the same response, so it serves a function URL unchanged.
//
// Routes:
//
//	GET  /hello?name=N  200 {"message":"hello, N","requestId":...,"served":...}
//	POST /echo          200 with the request body and Content-Type
//	anything else       404
//
// The move from aws-lambda-go is the one line in main. What changes is
// that up to AWS_LAMBDA_MAX_CONCURRENCY invocations run handle at once,
// so state shared between them (served, here) must be safe for
// concurrent use.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

func main() {
	// lambda.Start(handle)
	concurrent.Start(handle)
}

// served counts the requests this execution environment has answered,
// across all the invocations it runs at once.
var served atomic.Int64

type greeting struct {
	Message   string `json:"message"`
	RequestID string `json:"requestId"`
	Served    int64  `json:"served"`
}

func handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	n := served.Add(1)
	method, path := req.RequestContext.HTTP.Method, req.RawPath
	switch {
	case method == http.MethodGet && path == "/hello":
		name := req.QueryStringParameters["name"]
		if name == "" {
			name = "world"
		}
		// lambdacontext works as with aws-lambda-go; the logger tags each
		// line with this invocation's requestId.
		lc, _ := lambdacontext.FromContext(ctx)
		concurrent.Logger(ctx).Info("greeting", zap.String("name", name))
		return jsonResponse(http.StatusOK, greeting{Message: "hello, " + name, RequestID: lc.AwsRequestID, Served: n})

	case method == http.MethodPost && path == "/echo":
		if req.IsBase64Encoded {
			if _, err := base64.StdEncoding.DecodeString(req.Body); err != nil {
				return jsonResponse(http.StatusBadRequest, map[string]string{"error": "body is not valid base64"})
			}
		}
		ct := req.Headers["content-type"] // HTTP APIs lower-case header names
		if ct == "" {
			ct = "application/octet-stream"
		}
		// A base64 body goes back base64-encoded, byte for byte.
		return events.APIGatewayV2HTTPResponse{
			StatusCode:      http.StatusOK,
			Headers:         map[string]string{"Content-Type": ct},
			Body:            req.Body,
			IsBase64Encoded: req.IsBase64Encoded,
		}, nil
	}
	return jsonResponse(http.StatusNotFound, map[string]string{"error": "no route for " + method + " " + path})
}

func jsonResponse(status int, v any) (events.APIGatewayV2HTTPResponse, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json"},
		Body:       string(body),
	}, nil
}
