// Package lambdainvoke invokes a Lambda function synchronously
// (RequestResponse) through aws-sdk-go-v2's Lambda Invoke API, for load
// runs against a deployed function or against the AWS Runtime Interface
// Emulator's invoke endpoint.
//
//	inv, err := lambdainvoke.New(ctx, lambdainvoke.Options{FunctionName: "my-fn", Region: "eu-west-1"})
//	defer inv.Close()
//	r, err := inv.Invoke(ctx, []byte(`{"id":1}`))
//	// r.Status, r.Body, r.FunctionError, r.Throttled, r.Latency
//
// # Contract
//
// Invoke is safe for concurrent use and blocks until the answer's body has
// been read or ctx ends. A function error and a throttle are answers, not
// errors: Invoke reports them in Result with a nil error. Any other refusal
// (a 4xx or 5xx that is not a throttle) and every transport failure is an
// error; Result then still carries Status (0 when no answer came) and
// Latency, so that a load test can count it. Result.Body belongs to the
// caller. Close releases the idle connections of the Invoker's transport
// (call it when done: they hold goroutines).
//
// # Retries are off
//
// The SDK client runs with aws.NopRetryer: one Invoke is exactly one HTTP
// request, so a load test counts throttles and failures instead of having
// the SDK hide them behind back-off (which would also distort latency).
//
// # Lambda and the emulator
//
// The two report the same things differently, and Invoke maps both:
//
//   - Function error. Lambda answers 200 with X-Amz-Function-Error
//     (Unhandled or Handled), which the SDK surfaces as
//     InvokeOutput.FunctionError. The emulator answers 200 without it and
//     puts the error type (Function.Error, Runtime.Unknown,
//     Sandbox.Timedout, Runtime.ExitError, ...) in an Error-Type header,
//     which the SDK ignores: a deserialize middleware reads that header off
//     the raw response. FunctionError is X-Amz-Function-Error when present,
//     else Error-Type.
//   - Throttle. Lambda answers 429 TooManyRequestsException. The emulator
//     answers 400 with Error-Type Runtime.Unavailable and the body
//     {"errorType":"Runtime.Unavailable"}, which the SDK turns into a
//     generic API error; the middleware's status and header identify it.
//     Both give Throttled true, Status 429 or 400, and a nil error.
//
// With Options.Endpoint set to the emulator (http://127.0.0.1:PORT) and
// FunctionName "function", the SDK's request path is the emulator's
// POST /2015-03-31/functions/function/invocations. Options.Static avoids
// the default credential chain there.
package lambdainvoke
