package rie

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Header names and values of the emulator's invoke endpoint.
const (
	// ErrorTypeHeader carries the error type of every answer that is not a
	// plain success: function errors (status 200) as well as the
	// emulator's own refusals (4xx/5xx). The emulator does not send
	// X-Amz-Function-Error.
	ErrorTypeHeader = "Error-Type"

	// ThrottleErrorType is the ErrorTypeHeader value of an invoke that
	// found no pending /next (status 400).
	ThrottleErrorType = "Runtime.Unavailable"
)

// Request headers the emulator reads (see InvokeWith).
const (
	RequestIDHeader       = "X-Amzn-RequestId"
	TraceIDHeader         = "X-Amzn-Trace-Id"
	ClientContextHeader   = "X-Amz-Client-Context" // base64 of the JSON
	CognitoIdentityHeader = "X-Amz-Cognito-Identity"
	ResponseModeHeader    = "Invoke-Response-Mode"
)

// Result is the emulator's answer to one invoke.
type Result struct {
	Status int         // HTTP status: 200 for successes and function errors
	Body   []byte      // response payload, or the error's JSON document
	Header http.Header // response headers

	// FunctionError is the Error-Type header: the runtime's error type for
	// a function error, or the emulator's error type for a refusal
	// (Runtime.Unavailable, Client.DuplicatedInvokeId, ...). Empty on
	// success.
	FunctionError string

	// Throttled is true when the emulator refused the invoke with
	// Runtime.Unavailable because no /next was pending.
	Throttled bool

	// Latency is the time from sending the request to the end of the body.
	Latency time.Duration
}

// OK reports a plain success: status 200 and no error type.
func (r Result) OK() bool { return r.Status == http.StatusOK && r.FunctionError == "" }

// Invoke sends payload to the function and waits for the answer. The error
// is non-nil only when no HTTP answer arrived; function errors and
// throttles are answers, reported in Result.
func (e *Emulator) Invoke(ctx context.Context, payload []byte) (Result, error) {
	return e.InvokeWith(ctx, payload, nil)
}

// InvokeWith is Invoke with extra request headers, for example
// RequestIDHeader (the emulator uses it as the request ID and refuses a
// duplicate of one in flight), TraceIDHeader, ClientContextHeader (base64;
// anything else is refused with 400), CognitoIdentityHeader (JSON) or
// Content-Type.
func (e *Emulator) InvokeWith(ctx context.Context, payload []byte, header http.Header) (Result, error) {
	select {
	case <-e.stopped:
		return Result{}, ErrStopped
	default:
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.invokeURL, bytes.NewReader(payload))
	if err != nil {
		return Result{}, fmt.Errorf("rie: invoke: %w", err)
	}
	for k, v := range header {
		req.Header[k] = append([]string(nil), v...)
	}
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("rie: invoke: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return Result{}, fmt.Errorf("rie: invoke: read body: %w", err)
	}
	r := Result{
		Status:        resp.StatusCode,
		Body:          body,
		Header:        resp.Header,
		FunctionError: resp.Header.Get(ErrorTypeHeader),
		Latency:       time.Since(start),
	}
	r.Throttled = r.FunctionError == ThrottleErrorType
	return r, nil
}
