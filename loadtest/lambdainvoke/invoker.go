package lambdainvoke

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Header names and values of the emulator's invoke answers.
const (
	// ErrorTypeHeader is where the emulator reports every error type,
	// function errors (status 200) and its own refusals alike.
	ErrorTypeHeader = "Error-Type"

	// ThrottleErrorType is the emulator's ErrorTypeHeader for an invoke that
	// found no free slot (status 400).
	ThrottleErrorType = "Runtime.Unavailable"
)

const (
	defaultMaxConns     = 1024
	staticRegion        = "us-east-1"
	imdsTimeout         = 2 * time.Second
	staticAccessKey     = "lmigo"
	staticSecretKey     = "lmigo"
	rawResponseMiddleID = "lmigo.lambdainvoke.RawResponse"
)

// Options configures an Invoker.
type Options struct {
	// FunctionName is the function's name or ARN (required). "function"
	// for the emulator.
	FunctionName string

	// Qualifier is a version or alias; empty means $LATEST.
	Qualifier string

	// Region overrides the region of the loaded config. With Static, empty
	// means us-east-1.
	Region string

	// Endpoint is the base URL of the Lambda API, e.g.
	// http://127.0.0.1:8080 for the emulator. Empty means AWS.
	Endpoint string

	// MaxConns bounds the idle connections the HTTP transport keeps (per
	// host and in all). It should be at least the number of concurrent
	// callers, or connections are closed and dialled again under load.
	// Zero means 1024.
	MaxConns int

	// Static uses dummy static credentials and loads no AWS config at all
	// (no environment, shared files, IMDS or AWS_CA_BUNDLE): for the
	// emulator.
	Static bool
}

// Result is the answer to one invoke.
type Result struct {
	// Status is the HTTP status: 200 for successes and function errors,
	// 429 (Lambda) or 400 (emulator) for throttles, 0 when no answer came.
	Status int

	// Body is the function's response, or its error document when
	// FunctionError is set. Nil for throttles and errors.
	Body []byte

	// FunctionError is Lambda's X-Amz-Function-Error (Unhandled, Handled)
	// or, from the emulator, its Error-Type (Function.Error,
	// Runtime.Unknown, Sandbox.Timedout, ...). Empty on success.
	FunctionError string

	// Throttled is true when Lambda refused the invoke with
	// TooManyRequestsException or the emulator with Runtime.Unavailable.
	Throttled bool

	// Latency is the time Invoke took, from before request signing to the
	// end of the response body.
	Latency time.Duration
}

// Invoker invokes one function. Its methods are safe for concurrent use.
type Invoker struct {
	client    *lambda.Client
	transport *http.Transport
	function  *string
	qualifier *string
}

// New builds an Invoker. Unless opts.Static, it loads the default AWS
// config: environment, shared config and credentials files, and on EC2 the
// instance role and (when no region is set anywhere else) the instance's
// region from IMDS (at most 2 s off EC2). AWS_CA_BUNDLE is honoured. It
// sends no request to Lambda.
func New(ctx context.Context, opts Options) (*Invoker, error) {
	if opts.FunctionName == "" {
		return nil, ErrNoFunction
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns
	}
	nop := func() aws.Retryer { return aws.NopRetryer{} }
	var cfg aws.Config
	if opts.Static {
		cfg = aws.Config{
			Region:      opts.Region,
			Credentials: credentials.NewStaticCredentialsProvider(staticAccessKey, staticSecretKey, ""),
			Retryer:     nop,
		}
		if cfg.Region == "" {
			cfg.Region = staticRegion
		}
	} else {
		load := []func(*config.LoadOptions) error{config.WithRetryer(nop)}
		if opts.Region != "" {
			load = append(load, config.WithRegion(opts.Region))
		}
		var err error
		cfg, err = config.LoadDefaultConfig(ctx, load...)
		if err != nil {
			return nil, fmt.Errorf("lambdainvoke: load AWS config: %w", err)
		}
	}
	// Invokes go through a transport of our own, so that Close can close
	// its idle connections (the SDK's client does not expose them). It
	// starts from the SDK's defaults, or from the client the config built
	// for AWS_CA_BUNDLE, which carries the extra root CAs.
	var tr *http.Transport
	if b, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		tr = b.GetTransport()
	} else {
		tr = awshttp.NewBuildableClient().GetTransport()
	}
	tr.MaxIdleConns = opts.MaxConns
	tr.MaxIdleConnsPerHost = opts.MaxConns
	cfg.HTTPClient = &http.Client{
		Transport: tr,
		// Like the SDK's own client: a redirect is an answer, not a hop.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if cfg.Region == "" && !opts.Static {
		cfg.Region = imdsRegion(ctx, cfg)
	}
	if cfg.Region == "" {
		tr.CloseIdleConnections()
		return nil, ErrNoRegion
	}
	client := lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.APIOptions = append(o.APIOptions, addRawResponse)
	})
	inv := &Invoker{client: client, transport: tr, function: aws.String(opts.FunctionName)}
	if opts.Qualifier != "" {
		inv.qualifier = aws.String(opts.Qualifier)
	}
	return inv, nil
}

// imdsRegion asks the EC2 instance metadata service for the instance's
// region, briefly: off EC2 it answers "" after imdsTimeout at most, at once
// when AWS_EC2_METADATA_DISABLED is true.
func imdsRegion(ctx context.Context, cfg aws.Config) string {
	ctx, cancel := context.WithTimeout(ctx, imdsTimeout)
	defer cancel()
	out, err := imds.NewFromConfig(cfg).GetRegion(ctx, &imds.GetRegionInput{})
	if err != nil {
		return ""
	}
	return out.Region
}

// Invoke calls the function with payload and waits for its answer. See the
// package doc for what is an error and what is reported in Result.
func (i *Invoker) Invoke(ctx context.Context, payload []byte) (Result, error) {
	var raw rawResponse
	ctx = context.WithValue(ctx, rawResponseKey{}, &raw)
	start := time.Now()
	out, err := i.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   i.function,
		Qualifier:      i.qualifier,
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	r := Result{Status: raw.status, Latency: time.Since(start)}
	if err != nil {
		if isThrottle(err, raw) {
			r.Throttled = true
			return r, nil
		}
		if raw.errorType != "" {
			return r, fmt.Errorf("lambdainvoke: invoke: status %d, %s %s: %w", raw.status, ErrorTypeHeader, raw.errorType, err)
		}
		return r, fmt.Errorf("lambdainvoke: invoke: %w", err)
	}
	if r.Status == 0 {
		r.Status = int(out.StatusCode)
	}
	r.Body = out.Payload
	r.FunctionError = aws.ToString(out.FunctionError)
	if r.FunctionError == "" {
		r.FunctionError = raw.errorType
	}
	return r, nil
}

// Close closes the transport's idle connections, so that no connection
// goroutine outlives the Invoker. In-flight invokes finish; a later Invoke
// still works but dials again.
func (i *Invoker) Close() { i.transport.CloseIdleConnections() }

// isThrottle recognises Lambda's 429 TooManyRequestsException and the
// emulator's 400 Runtime.Unavailable.
func isThrottle(err error, raw rawResponse) bool {
	var tmr *types.TooManyRequestsException
	return errors.As(err, &tmr) || raw.status == http.StatusTooManyRequests || raw.errorType == ThrottleErrorType
}

// rawResponse is what the SDK does not surface: the emulator's Error-Type
// header (ignored on a 200, unparsed on a 400) and the status of an error
// answer.
type rawResponse struct {
	status    int
	errorType string
}

type rawResponseKey struct{}

// addRawResponse adds, innermost in the deserialize step (right after the
// HTTP round trip), a middleware that copies the status and Error-Type of
// the raw response into the rawResponse that Invoke put in the context.
func addRawResponse(s *middleware.Stack) error {
	return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc(rawResponseMiddleID,
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			raw, _ := ctx.Value(rawResponseKey{}).(*rawResponse)
			if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && raw != nil && resp.Response != nil {
				raw.status = resp.StatusCode
				raw.errorType = resp.Header.Get(ErrorTypeHeader)
			}
			return out, md, err
		}), middleware.After)
}
