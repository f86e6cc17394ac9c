package concurrent

// The cases of TestAWSCompat: aws-lambda-go v1.55.1's test cases that
// concern what a user sees, re-created (inputs and expectations) as a
// table of this package's own. The handlers live in this file, so that
// the frames of a panic's stack that are the handler's own can be told
// from the runtimes' (compatFrames).
//
// Not re-created: safeMarshal's fallback (TestSafeMarshal_SerializationError:
// no error document a handler can produce reaches it), the RPC mode of the
// go1.x runtime (rpc_function_test.go, entry_with_rpc_test.go), the
// client's internals (runtime_api_client_test.go: URLs, the proxy bypass,
// which Go skips on loopback anyway), formatFrame alone (panic_test.go:
// run here through real panics), and the tests that need docker
// (TestConcurrencyWithRIE, TestEnableSigterm's container: re-created
// against the fake Runtime API).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/handlertrace"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// Interfaces of TestInvalidHandlers.
type (
	acValuer interface {
		Value(key any) any
	}
	acCustomContext interface {
		context.Context
		MyCustomMethod()
	}
	acMyContext interface {
		Deadline() (deadline time.Time, ok bool)
		Done() <-chan struct{}
		Err() error
		Value(key any) any
	}
)

// acJSON marshals to what it holds (TestInvokes' arbitraryJSON).
type acJSON struct {
	json []byte
	err  error
}

func (a acJSON) MarshalJSON() ([]byte, error) { return a.json, a.err }

// acStatic is a lambda.Handler with a fixed answer (staticHandler).
type acStatic struct{ body []byte }

func (h *acStatic) Invoke(context.Context, []byte) ([]byte, error) { return h.body, nil }

// acTyped is a lambda.Handler that says its content type.
type acTyped struct{ acStatic }

func (acTyped) ContentType() string { return "text/xml" }

// acReadCloser prints when it is closed (readCloser).
type acReadCloser struct {
	i int
	r *strings.Reader
}

func (r *acReadCloser) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r *acReadCloser) Close() error {
	fmt.Printf("compat: closed %d\n", r.i)
	return nil
}

// acCustomError is panic_test.go's and TestCustomErrorMarshaling's CustomError.
type acCustomError struct{ error }

// acTypeName is the name of v's type (TestInvokes' WithUseNumber cases).
func acTypeName(v any) string { return reflect.TypeOf(v).Name() }

func acReq(payload string) rapitest.Request { return rapitest.Request{Payload: []byte(payload)} }

func acReqs(payload string, k int) []rapitest.Request {
	r := make([]rapitest.Request, k)
	for i := range r {
		r[i] = acReq(payload)
	}
	return r
}

func acOpts(o ...lambda.Option) func() []lambda.Option { return func() []lambda.Option { return o } }

// acErrors returns a handler that fails with errs in turn.
func acErrors(errs ...error) func() any {
	return func() any {
		n := 0
		return func() error {
			defer func() { n++ }()
			return errs[n]
		}
	}
}

func acReverse(s string) string {
	r := make([]rune, utf8.RuneCountInString(s))
	for i, c := range []rune(s) {
		r[len(r)-1-i] = c
	}
	return string(r)
}

// acMetadata are the /next headers of the invoke loop's tests
// (defaultInvokeMetadata).
func acMetadata(over map[string]string) rapitest.Request {
	h := map[string]string{
		"Lambda-Runtime-Client-Context": `{"Client":{"app_title":"dummytitle","installation_id":"dummyinstallid",` +
			`"app_version_code":"dummycode","app_package_name":"dummyname"}}`,
		"Lambda-Runtime-Cognito-Identity":     `{"cognitoIdentityId":"dummyident","cognitoIdentityPoolId":"dummypool"}`,
		"Lambda-Runtime-Trace-Id":             "its-xray-time",
		"Lambda-Runtime-Aws-Request-Id":       "dummyid",
		"Lambda-Runtime-Deadline-Ms":          "22",
		"Lambda-Runtime-Invoked-Function-Arn": "dummyarn",
	}
	for k, v := range over {
		h[k] = v
	}
	return rapitest.Request{Payload: []byte(`{}`), Headers: h}
}

// acPanics is the handler of a panic case: it panics with v.
func acPanics(v any) func() any {
	return func() any { return func() error { panic(v) } }
}

// acPanicking panics with v from a function of its own, below the handler.
func acPanicking(v any) { panic(v) }

// acBarrier returns a channel closed once n callers have arrived.
func acBarrier(n int32) func() <-chan struct{} {
	var arrived atomic.Int32
	all := make(chan struct{})
	return func() <-chan struct{} {
		if arrived.Add(1) == n {
			close(all)
		}
		return all
	}
}

// acSIGTERMHandler is TestEnableSigterm's function (testdata/sigterm.go):
// the program's own SIGTERM handler, and a handler that answers at once
// (the fake Runtime API's SIGTERM comes from the test, not a timeout).
// acOwnSIGTERMLine is what the program's own SIGTERM handler prints.
const acOwnSIGTERMLine = "compat: I've been TERMINATED!"

func acSIGTERMHandler() any {
	signaled := make(chan os.Signal, 1)
	signal.Notify(signaled, syscall.SIGTERM)
	go func() {
		<-signaled
		fmt.Println(acOwnSIGTERMLine)
	}()
	return func(context.Context) {}
}

func awsCases() []awsCase {
	var cases []awsCase
	add := func(from string, cs ...awsCase) {
		for _, c := range cs {
			c.from = from
			if c.reqs == nil {
				c.reqs = []rapitest.Request{acReq(`{}`)}
			}
			cases = append(cases, c)
		}
	}
	fn := func(f any) func() any { return func() any { return f } }

	// handler_test.go, TestInvalidHandlers: invalid handlers fail every
	// invocation in aws-lambda-go, init in lmigo; the valid ones answer.
	add("handler_test.go TestInvalidHandlers",
		awsCase{name: "invalid/nil handler", handler: fn(nil), want: []string{"error: handler is nil"}},
		awsCase{name: "invalid/not a function", handler: fn(struct{}{}), want: []string{"error: handler kind struct is not func"}},
		awsCase{name: "invalid/three arguments", handler: fn(func(context.Context, string, string) error { return nil }),
			want: []string{"error: handlers may not take more than two arguments, but handler takes 3"}},
		awsCase{name: "invalid/context second", handler: fn(func(string, context.Context) error { return nil }),
			want: []string{"error: handler takes two arguments, but the first is not Context. got string"}},
		awsCase{name: "invalid/three results", handler: fn(func() (error, error, error) { return nil, nil, nil }),
			want: []string{"error: handler may not return more than two values"}},
		awsCase{name: "invalid/second result not error", handler: fn(func() (error, string) { return nil, "hello" }), //nolint:staticcheck // the case
			want: []string{"error: handler returns two values, but the second does not implement error"}},
		awsCase{name: "invalid/one result not error", handler: fn(func() string { return "hello" }),
			want: []string{"error: handler returns a single value, but it does not implement error"}},
		awsCase{name: "valid/no result", handler: fn(func() {}), want: []string{"null"}},
		awsCase{name: "valid/empty interface", handler: fn(func(v any) error {
			if _, ok := v.(context.Context); ok {
				return errors.New("v should not be a Context")
			}
			return nil
		}), want: []string{"null"}},
		awsCase{name: "invalid/subset of context", handler: fn(func(acValuer) {}),
			want: []string{`error: handler takes an interface, but it is not context.Context: \"acValuer\"`}},
		awsCase{name: "valid/same interface as context", handler: fn(func(acMyContext) {}), want: []string{"null"}},
		awsCase{name: "invalid/superset of context", handler: fn(func(acCustomContext) {}),
			want: []string{`error: handler takes an interface, but it is not context.Context: \"acCustomContext\"`}},
		awsCase{name: "invalid/two arguments, subset of context", handler: fn(func(acValuer, any) {}),
			want: []string{"error: handler takes two arguments, but the first is not Context. got interface"}},
		awsCase{name: "valid/two arguments, same interface as context", handler: fn(func(acMyContext, any) {}), want: []string{"null"}},
		awsCase{name: "invalid/two arguments, superset of context", handler: fn(func(acCustomContext, any) {}),
			want: []string{"error: handler takes two arguments, but the first is not Context. got interface"}},
	)

	// handler_test.go, TestInvokes, TestInvalidJsonInput, TestHandlerTrace.
	hello := func(s string) string { return fmt.Sprintf("Hello %s!", s) }
	hellop := func(s *string) *string { v := hello(*s); return &v }
	bad := errors.New("bad stuff")
	html := "<html><body>html in json string!</body></html>"
	lam := []rapitest.Request{acReq(`"Lambda"`)}
	add("handler_test.go TestInvokes",
		awsCase{name: "invokes/0 no result", reqs: lam, handler: fn(func(string) {}), want: []string{"null"}},
		awsCase{name: "invokes/1 string", reqs: lam, handler: fn(func(name string) (string, error) { return hello(name), nil }),
			want: []string{`"Hello Lambda!"`}},
		awsCase{name: "invokes/2 no event", reqs: []rapitest.Request{acReq(``)},
			handler: fn(func(context.Context) (string, error) { return hello("No Value"), nil }), want: []string{`"Hello No Value!"`}},
		awsCase{name: "invokes/3 context and string", reqs: lam,
			handler: fn(func(_ context.Context, name string) (string, error) { return hello(name), nil }), want: []string{`"Hello Lambda!"`}},
		awsCase{name: "invokes/4 pointers", reqs: lam, handler: fn(func(name *string) (*string, error) { return hellop(name), nil }),
			want: []string{`"Hello Lambda!"`}},
		awsCase{name: "invokes/5 pointers again", reqs: lam, handler: fn(func(name *string) (*string, error) { return hellop(name), nil }),
			want: []string{`"Hello Lambda!"`}},
		awsCase{name: "invokes/6 context and pointers", reqs: lam,
			handler: fn(func(_ context.Context, name *string) (*string, error) { return hellop(name), nil }), want: []string{`"Hello Lambda!"`}},
		awsCase{name: "invokes/7 error only", reqs: lam, handler: fn(func() error { return bad }), want: []string{"error: bad stuff"}},
		awsCase{name: "invokes/8 any and error", reqs: lam, handler: fn(func() (any, error) { return nil, bad }), want: []string{"error: bad stuff"}},
		awsCase{name: "invokes/9 any in and out", reqs: lam, handler: fn(func(any) (any, error) { return nil, bad }), want: []string{"error: bad stuff"}},
		awsCase{name: "invokes/10 context, any in and out", reqs: lam, handler: fn(func(context.Context, any) (any, error) { return nil, bad }),
			want: []string{"error: bad stuff"}},
		awsCase{name: "invokes/11 struct in", reqs: []rapitest.Request{acReq(`{"custom":9001}`)},
			handler: fn(func(e struct{ Custom int }) (int, error) { return e.Custom, nil }), want: []string{`9001`}},
		awsCase{name: "invokes/12 struct out", reqs: []rapitest.Request{acReq(`9001`)},
			handler: fn(func(e int) (struct{ Number int }, error) { return struct{ Number int }{e}, nil }), want: []string{`{"Number":9001}`}},
		awsCase{name: "invokes/13 InvokeResponse_Error", reqs: lam, handler: fn(func(any) (any, error) {
			return nil, messages.InvokeResponse_Error{Message: "message", Type: "type"}
		}), want: []string{`error: {"errorMessage":"message","errorType":"type"}`}},
		awsCase{name: "invokes/14 WithSetEscapeHTML(false)", handler: fn(func() (string, error) { return html, nil }),
			opts: acOpts(lambda.WithSetEscapeHTML(false)), want: []string{`"` + html + `"`}},
		awsCase{name: "invokes/15 WithSetEscapeHTML(true)", handler: fn(func() (string, error) { return html, nil }),
			opts: acOpts(lambda.WithSetEscapeHTML(true)),
			want: []string{`"\u003chtml\u003e\u003cbody\u003ehtml in json string!\u003c/body\u003e\u003c/html\u003e"`}},
		awsCase{name: "invokes/16 WithSetIndent", handler: fn(func() (any, error) { return struct{ Foo string }{"Bar"}, nil }),
			opts: acOpts(lambda.WithSetIndent(">>", "  ")), want: []string{"{\n>>  \"Foo\": \"Bar\"\n>>}\n"}},
		awsCase{name: "invokes/17 WithUseNumber(true)", reqs: []rapitest.Request{acReq(`19.99`)},
			handler: fn(func(e any) (string, error) { return acTypeName(e), nil }), opts: acOpts(lambda.WithUseNumber(true)),
			want: []string{`"Number"`}},
		awsCase{name: "invokes/18 WithUseNumber(false)", reqs: []rapitest.Request{acReq(`19.99`)},
			handler: fn(func(e any) (string, error) { return acTypeName(e), nil }), opts: acOpts(lambda.WithUseNumber(false)),
			want: []string{`"float64"`}},
		awsCase{name: "invokes/19 no decoder option", reqs: []rapitest.Request{acReq(`19.99`)},
			handler: fn(func(e any) (string, error) { return acTypeName(e), nil }), want: []string{`"float64"`}},
		awsCase{name: "invokes/20 WithDisallowUnknownFields(true)", reqs: []rapitest.Request{acReq(`{"Hello": "World"}`)},
			handler: fn(func(struct{}) {}), opts: acOpts(lambda.WithDisallowUnknownFields(true)),
			want: []string{`error: json: unknown field \"Hello\"`}},
		awsCase{name: "invokes/21 WithDisallowUnknownFields(false)", reqs: []rapitest.Request{acReq(`{"Hello": "World"}`)},
			handler: fn(func(struct{}) {}), opts: acOpts(lambda.WithDisallowUnknownFields(false)), want: []string{`null`}},
		awsCase{name: "invokes/22 no unknown-fields option", reqs: []rapitest.Request{acReq(`{"Hello": "World"}`)},
			handler: fn(func(struct{}) {}), want: []string{`null`}},
		awsCase{name: "invokes/23 bytes are base64", reqs: []rapitest.Request{acReq(`"aGVsbG8="`)},
			handler: fn(func(_ context.Context, b []byte) ([]byte, error) { return append(b, "yolo"...), nil }),
			want:    []string{`"aGVsbG95b2xv"`}},
		awsCase{name: "invokes/24 lambda.Handler", handler: func() any { return &acStatic{[]byte(`<xml>hello</xml>`)} },
			want: []string{`<xml>hello</xml>`}},
		awsCase{name: "invokes/25 io.Reader", handler: fn(func() (io.Reader, error) { return strings.NewReader(`<yolo>yolo</yolo>`), nil }),
			want: []string{`<yolo>yolo</yolo>`}},
		awsCase{name: "invokes/26 *bytes.Buffer", handler: fn(func() (*bytes.Buffer, error) { return bytes.NewBufferString(`<yolo>yolo</yolo>`), nil }),
			want: []string{`<yolo>yolo</yolo>`}},
		awsCase{name: "invokes/27 reader that encodes", handler: fn(func() (io.Reader, error) {
			return struct {
				io.Reader `json:"-"`
				Yolo      string
			}{strings.NewReader(`<yolo>yolo</yolo>`), "yolo"}, nil
		}), want: []string{`{"Yolo":"yolo"}`}},
		awsCase{name: "invokes/28 not encodable", handler: fn(func() (any, error) {
			return struct{ acJSON }{acJSON{nil, errors.New("barf")}}, nil
		}), want: []string{"error: json: error calling MarshalJSON"}},
		awsCase{name: "invokes/29 reader that does not encode", handler: fn(func() (io.Reader, error) {
			return struct {
				acJSON
				io.Reader
			}{acJSON{nil, errors.New("barf")}, strings.NewReader("wat")}, nil
		}), want: []string{`wat`}},
	)
	add("handler_test.go TestInvalidJsonInput",
		awsCase{name: "invalid JSON input", reqs: []rapitest.Request{acReq(`{"invalid json`)},
			handler: fn(func(string) error { return nil }), want: []string{"error: unexpected EOF"}},
	)
	add("handler_test.go TestHandlerTrace",
		awsCase{name: "handler trace", reqs: []rapitest.Request{acReq(`123`)},
			handler: fn(func(_ context.Context, x int) (int, error) { return x * 3, nil }),
			opts: func() []lambda.Option {
				trace := func(name string) func(context.Context, any) {
					return func(_ context.Context, v any) { fmt.Printf("compat: %s %v\n", name, v) }
				}
				ctx := handlertrace.NewContext(context.Background(), handlertrace.HandlerTrace{})
				ctx = handlertrace.NewContext(ctx, handlertrace.HandlerTrace{RequestEvent: trace("request A")})
				ctx = handlertrace.NewContext(ctx, handlertrace.HandlerTrace{ResponseEvent: trace("response X")})
				ctx = handlertrace.NewContext(ctx, handlertrace.HandlerTrace{RequestEvent: trace("request B"), ResponseEvent: trace("response Y")})
				return []lambda.Option{lambda.WithContext(handlertrace.NewContext(ctx, handlertrace.HandlerTrace{}))}
			}, want: []string{`369`}},
	)

	// invoke_loop_test.go.
	add("invoke_loop_test.go TestFatalErrors",
		awsCase{name: "loop/panic", handler: acPanics(errors.New("a fatal error")), reqs: acReqs(``, 2),
			want: []string{`error: "errorMessage":"a fatal error","errorType":"errorString","stackTrace":[`}},
	)
	add("invoke_loop_test.go TestRuntimeAPILoop",
		awsCase{name: "loop/every third fails", reqs: acReqs(``, 10), handler: func() any {
			n := 0
			return func(context.Context) (string, error) {
				n++
				if n%3 == 0 {
					return "", errors.New("error time!") //nolint:revive // aws-lambda-go's case as it is
				}
				return "Hello!", nil
			}
		}, want: strings.Split(`"Hello!"|"Hello!"|error: error time!|"Hello!"|"Hello!"|error: error time!|"Hello!"|"Hello!"|error: error time!|"Hello!"`, "|")},
	)
	add("invoke_loop_test.go TestCustomErrorMarshaling",
		awsCase{name: "loop/custom errors", reqs: acReqs(``, 3),
			handler: acErrors(errors.New("boring"),
				acCustomError{errors.New("Something bad happened!")}, //nolint:revive // aws-lambda-go's case as it is
				messages.InvokeResponse_Error{Type: "yolo", Message: "hello"}),
			want: []string{`error: {"errorMessage":"boring","errorType":"errorString"}`,
				`error: {"errorMessage":"Something bad happened!","errorType":"acCustomError"}`,
				`error: {"errorMessage":"hello","errorType":"yolo"}`}},
	)
	frame := func(label, path string, line int32) *messages.InvokeResponse_Error_StackFrame {
		return &messages.InvokeResponse_Error_StackFrame{Label: label, Path: path, Line: line}
	}
	add("invoke_loop_test.go TestXRayCausePlumbing",
		awsCase{name: "loop/X-Ray causes", reqs: acReqs(``, 5), handler: acErrors(
			errors.New("barf"),
			messages.InvokeResponse_Error{Type: "yoloError", Message: "hello yolo", StackTrace: []*messages.InvokeResponse_Error_StackFrame{
				frame("yolo", "yolo", 2), frame("hi", "hello/hello", 12)}},
			messages.InvokeResponse_Error{Type: "yoloError", Message: "hello yolo", StackTrace: []*messages.InvokeResponse_Error_StackFrame{
				frame("hi", "hello/hello", 12), frame("hihi", "hello/hello", 13), frame("yolo", "yolo", 2), frame("hi", "hello/hello", 14)}},
			messages.InvokeResponse_Error{Type: "yoloError", Message: "hello yolo", StackTrace: []*messages.InvokeResponse_Error_StackFrame{}},
			messages.InvokeResponse_Error{Type: "yoloError", Message: "hello yolo"},
		), want: []string{"error: barf", "error: hello yolo", "error: hello yolo", "error: hello yolo", "error: hello yolo"}},
	)
	plumbing := func(ctx context.Context) (any, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		return struct {
			Context    *lambdacontext.LambdaContext
			TraceID    string
			EnvTraceID string
			Deadline   int64
		}{lc, ctx.Value("x-amzn-trace-id").(string), os.Getenv("_X_AMZN_TRACE_ID"), deadline.UnixMilli()}, nil
	}
	plumbed := `{"Context":{"AwsRequestID":"dummyid","InvokedFunctionArn":"dummyarn",` +
		`"Identity":{"CognitoIdentityID":"dummyident","CognitoIdentityPoolID":"dummypool"},` +
		`"ClientContext":{"Client":{"installation_id":"dummyinstallid","app_title":"dummytitle","app_version_code":"dummycode","app_package_name":"dummyname"},` +
		`"env":null,"custom":null}%s},"TraceID":"its-xray-time","EnvTraceID":"its-xray-time","Deadline":22}`
	add("invoke_loop_test.go TestRuntimeAPIContextPlumbing",
		awsCase{name: "loop/context plumbing", handler: fn(plumbing),
			reqs: []rapitest.Request{acMetadata(nil), acMetadata(map[string]string{"Lambda-Runtime-Aws-Tenant-Id": "some-tenant-id"})},
			want: []string{"json: " + fmt.Sprintf(plumbed, ""), "json: " + fmt.Sprintf(plumbed, `,"TenantID":"some-tenant-id"`)}},
	)
	reverse := func(e struct{ Message string }) (string, error) { return acReverse(e.Message), nil }
	tacos := []rapitest.Request{acReq(`{"message": "I am craving tacos"}`)}
	add("invoke_loop_test.go TestReadPayload",
		awsCase{name: "loop/read payload", reqs: tacos, handler: fn(reverse), want: []string{`"socat gnivarc ma I"`}},
	)
	add("invoke_loop_test.go TestBinaryResponseDefaultContentType",
		awsCase{name: "loop/binary response", reqs: tacos, handler: fn(func(e struct{ Message string }) (io.Reader, error) {
			return strings.NewReader(acReverse(e.Message)), nil
		}), want: []string{`socat gnivarc ma I`}},
	)
	add("invoke_loop_test.go TestBinaryResponseDoesNotLeakResources",
		awsCase{name: "loop/readers closed", reqs: acReqs(`{}`, 3), handler: func() any {
			i := 0
			return func() (io.Reader, error) {
				i++
				return &acReadCloser{i, strings.NewReader(fmt.Sprintf("hello %d", i))}, nil
			}
		}, want: []string{"hello 1", "hello 2", "hello 3"}, lines: 3},
	)
	lcHandler := fn(func(ctx context.Context) (*lambdacontext.LambdaContext, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		return lc, nil
	})
	add("invoke_loop_test.go TestContextDeserializationErrors",
		awsCase{name: "loop/bad client context", handler: lcHandler,
			reqs: []rapitest.Request{acMetadata(map[string]string{"Lambda-Runtime-Client-Context": `{ not json }`})},
			want: []string{`error: {"errorMessage":"failed to unmarshal client context json: invalid character 'n' looking for beginning of object key string","errorType":"errorString"}`}},
		awsCase{name: "loop/bad cognito identity", handler: lcHandler,
			reqs: []rapitest.Request{acMetadata(map[string]string{"Lambda-Runtime-Cognito-Identity": `{ not json }`})},
			want: []string{`error: {"errorMessage":"failed to unmarshal cognito identity json: invalid character 'n' looking for beginning of object key string","errorType":"errorString"}`}},
		awsCase{name: "loop/bad deadline", handler: lcHandler,
			reqs: []rapitest.Request{acMetadata(map[string]string{"Lambda-Runtime-Deadline-Ms": `yolo`})},
			want: []string{`error: {"errorMessage":"failed to parse deadline: strconv.ParseInt: parsing \"yolo\": invalid syntax","errorType":"errorString"}`}},
	)
	add("invoke_loop_test.go TestClientContextWithNestedCustomValues",
		awsCase{name: "loop/nested custom values", handler: fn(func(ctx context.Context) (any, error) {
			lc, _ := lambdacontext.FromContext(ctx)
			return lc.ClientContext, nil
		}), reqs: []rapitest.Request{acMetadata(map[string]string{"Lambda-Runtime-Client-Context": `{"Client":{"app_title":"test",` +
			`"installation_id":"install1","app_version_code":"1.0","app_package_name":"com.test"},"custom":{"bedrockAgentCoreTargetId":` +
			`"target-123","bedrockAgentCorePropagatedHeaders":{"x-id": "my-custom-id"}}}`})},
			want: []string{`json: {"Client":{"installation_id":"install1","app_title":"test","app_version_code":"1.0","app_package_name":"com.test"},` +
				`"env":null,"custom":{"bedrockAgentCoreTargetId":"target-123","bedrockAgentCorePropagatedHeaders":"{\"x-id\": \"my-custom-id\"}"}}`}},
	)

	// invoke_loop_gte_go122_test.go.
	var conc []rapitest.Request
	var concWant []struct{ id, want string }
	for i := range 100 {
		id := fmt.Sprintf("request-%d", i)
		conc = append(conc, rapitest.Request{Payload: []byte(`{}`), Headers: map[string]string{"Lambda-Runtime-Aws-Request-Id": id}})
		w := `"` + id + `"`
		if i%10 == 6 || i%10 == 7 {
			w = `error: {"errorMessage":"error-` + id + `","errorType":"errorString"}`
		}
		concWant = append(concWant, struct{ id, want string }{id, w})
	}
	sort.Slice(concWant, func(i, j int) bool { return concWant[i].id < concWant[j].id })
	var concWants []string
	for _, w := range concWant {
		concWants = append(concWants, w.want)
	}
	add("invoke_loop_gte_go122_test.go TestRuntimeAPILoopWithConcurrency",
		awsCase{name: "concurrency/100 at N=5", n: 5, parallel: true, reqs: conc, handler: fn(func(ctx context.Context) (string, error) {
			lc, _ := lambdacontext.FromContext(ctx)
			switch lc.AwsRequestID[len(lc.AwsRequestID)-1:] {
			case "6", "7":
				return "", fmt.Errorf("error-%s", lc.AwsRequestID)
			}
			return lc.AwsRequestID, nil
		}), want: concWants},
	)
	add("invoke_loop_gte_go122_test.go TestRuntimeAPILoopSingleConcurrency",
		awsCase{name: "concurrency/10 at N=1", reqs: acReqs(`{}`, 10), handler: fn(func(context.Context) (string, error) { return "Hello!", nil }),
			want: strings.Split(strings.Repeat(`"Hello!"|`, 9)+`"Hello!"`, "|")},
	)
	var three []rapitest.Request
	for i := range 3 {
		three = append(three, rapitest.Request{Payload: []byte(`{}`), Headers: map[string]string{"Lambda-Runtime-Aws-Request-Id": fmt.Sprintf("panic-%d", i)}})
	}
	add("invoke_loop_gte_go122_test.go TestRuntimeAPILoopWithConcurrencyPanic",
		awsCase{name: "concurrency/3 panics at N=3", n: 3, parallel: true, reqs: three, handler: func() any {
			arrive := acBarrier(3) // all three in flight before any panics
			return func(ctx context.Context) error {
				<-arrive()
				lc, _ := lambdacontext.FromContext(ctx)
				panic(fmt.Errorf("%s", lc.AwsRequestID))
			}
		}, want: []string{"error: panic-0", "error: panic-1", "error: panic-2"}},
	)

	// entry_test.go, entry_generic_test.go, entry_with_no_rpc_test.go.
	type ctxKey struct{}
	valueCtx := context.WithValue(context.Background(), ctxKey{}, "expected")
	fromCtx := fn(func(ctx context.Context) (string, error) { v, _ := ctx.Value(ctxKey{}).(string); return v, nil })
	add("entry_test.go TestStartRuntimeAPIWithContext",
		awsCase{name: "entry/StartWithContext", handler: fromCtx, start: func(rt string, h any, _ []lambda.Option) {
			if rt == "aws" {
				lambda.StartWithContext(valueCtx, h) //nolint:staticcheck // deprecated, still what a user may have
				return
			}
			StartWithOptions(h, lambda.WithContext(valueCtx))
		}, want: []string{`"expected"`}},
		awsCase{name: "entry/WithContext", handler: fromCtx, opts: acOpts(lambda.WithContext(valueCtx)), want: []string{`"expected"`}},
		awsCase{name: "entry/WithContextValue", handler: fromCtx, opts: acOpts(lambda.WithContextValue(ctxKey{}, "expected")),
			want: []string{`"expected"`}},
	)
	typed := func(_ context.Context, n int) (int, error) { return n + 1, nil }
	startTyped := func(rt string, h any, opts []lambda.Option) {
		if rt == "aws" {
			lambda.StartHandlerFunc(h.(func(context.Context, int) (int, error)), opts...)
			return
		}
		StartHandlerFunc(h.(func(context.Context, int) (int, error)), opts...)
	}
	add("entry_generic_test.go TestStartHandlerFunc",
		awsCase{name: "entry/StartHandlerFunc outside Lambda", handler: fn(typed), start: startTyped,
			env: map[string]string{"AWS_LAMBDA_RUNTIME_API": ""}},
		awsCase{name: "entry/StartHandlerFunc", handler: fn(typed), start: startTyped, reqs: []rapitest.Request{acReq(`41`)},
			opts: acOpts(lambda.WithSetIndent("", " ")), want: []string{"42\n"}},
	)
	add("entry_with_no_rpc_test.go TestStartNotInLambda",
		awsCase{name: "entry/Start outside Lambda", handler: fn(func() error { return nil }),
			env: map[string]string{"AWS_LAMBDA_RUNTIME_API": ""}, start: func(rt string, h any, _ []lambda.Option) {
				if rt == "aws" {
					lambda.Start(h)
					return
				}
				Start(h)
			}},
	)
	add("entry.go StartHandler",
		awsCase{name: "entry/StartHandler", handler: func() any { return &acStatic{[]byte("static")} }, start: func(rt string, h any, _ []lambda.Option) {
			if rt == "aws" {
				lambda.StartHandler(h.(lambda.Handler)) //nolint:staticcheck // deprecated, still what a user may have
				return
			}
			Start(h)
		}, want: []string{"static"}},
		awsCase{name: "entry/lambda.Handler with a content type", handler: func() any { return &acTyped{acStatic{[]byte("<x/>")}} },
			contentType: "text/xml", want: []string{"<x/>"}},
	)

	// panic_test.go: what a panic's value becomes.
	add("panic_test.go",
		awsCase{name: "panic/string", handler: acPanics("Panic time!"), want: []string{`error: "errorMessage":"Panic time!","errorType":"string"`}},
		awsCase{name: "panic/int", handler: acPanics(1234), want: []string{`error: "errorMessage":"1234","errorType":"int"`}},
		awsCase{name: "panic/custom error", handler: acPanics(&acCustomError{errors.New("oh noooooo!")}), //nolint:revive // aws-lambda-go's case as it is
			want: []string{`error: "errorMessage":"oh noooooo!","errorType":"acCustomError"`}},
		awsCase{name: "panic/*InvokeResponse_Error", handler: acPanics(&messages.InvokeResponse_Error{Message: "message", Type: "type"}),
			want: []string{`error: "errorType":"InvokeResponse_Error"`}},
		awsCase{name: "panic/InvokeResponse_Error", handler: acPanics(messages.InvokeResponse_Error{Message: "message", Type: "type"}),
			reqs: acReqs(`{}`, 2), want: []string{`error: {"errorMessage":"message","errorType":"type"}`, `error: {"errorMessage":"message","errorType":"type"}`}},
		awsCase{name: "panic/below the handler", handler: fn(func() error { acPanicking("deep"); return nil }),
			want: []string{`error: "errorMessage":"deep"`}},
	)

	// sigterm_test.go TestEnableSigterm, against the fake Runtime API.
	add("sigterm_test.go TestEnableSigterm",
		awsCase{name: "sigterm/baseline", handler: acSIGTERMHandler, sigterm: true, hookLines: 1, want: []string{"null"}},
		awsCase{name: "sigterm/enabled", handler: acSIGTERMHandler, sigterm: true, hookLines: 2, want: []string{"null"},
			opts: acOpts(lambda.WithEnableSIGTERM(func() { fmt.Println("compat: Hello SIGTERM!") }))},
		awsCase{name: "sigterm/enabled without callbacks", handler: fn(func() {}), sigterm: true, want: []string{"null"},
			opts: acOpts(lambda.WithEnableSIGTERM())},
	)

	// The X-Ray cause and the error document at their edges.
	wd, _ := os.Getwd()
	// A message whose document fits 1 MiB and whose cause does not.
	nearMiB := strings.Repeat("m", 1<<20-len(`{"errorMessage":"","errorType":"errorString"}`)-len(wd)/2)
	add("invoke_loop.go reportFailure",
		awsCase{name: "cause/HTML, line separator, invalid UTF-8", handler: fn(func() error { return errors.New("<a&b> \u2028 \xff") }),
			want: []string{`error: \u003ca\u0026b\u003e`}},
		awsCase{name: "cause/wrapped", handler: fn(func() error { return fmt.Errorf("wrapped: %w", io.EOF) }), want: []string{`error: wrapError`}},
		awsCase{name: "cause/joined", handler: fn(func() error { return errors.Join(io.EOF, io.ErrUnexpectedEOF) }), want: []string{`error: joinError`}},
		awsCase{name: "cause/DEL", handler: fn(func() error { return errors.New("del \x7f") }), reqs: acReqs(`{}`, 2)},
		awsCase{name: "cause/document under 1 MiB, cause over", handler: fn(func() error { return errors.New(nearMiB) }),
			want: []string{"error: mmmm"}},
		awsCase{name: "cause/document over 1 MiB", handler: fn(func() error { return errors.New(strings.Repeat("x", 2<<20)) }),
			reqs: acReqs(`{}`, 2)},
	)
	// What the error type header carries.
	add("invoke_loop.go reportFailure",
		awsCase{name: "error type/Function.MyError", handler: acErrors(messages.InvokeResponse_Error{Type: "Function.MyError", Message: "m"}),
			want: []string{`error: {"errorMessage":"m","errorType":"Function.MyError"}`}},
		awsCase{name: "error type/unnamed", handler: fn(func() error { return struct{ error }{errors.New("x")} }),
			want: []string{`error: {"errorMessage":"x","errorType":""}`}},
		awsCase{name: "error type/not a header value", handler: acErrors(messages.InvokeResponse_Error{Type: "T\x01", Message: "m"}),
			want: []string{`error: {"errorMessage":"m","errorType":"T\u0001"}`}},
	)

	// This package's own handler table (handler_test.go), which
	// compares the handler adapters, through both runtimes whole.
	for _, hc := range compatCases() {
		payloads := hc.payloads
		if payloads == nil {
			payloads = compatEventPayloads
		}
		var reqs []rapitest.Request
		for _, p := range payloads {
			reqs = append(reqs, acReq(p))
		}
		name := hc.name
		add("handler_test.go compatCases", awsCase{name: "table/" + hc.name, reqs: reqs, handler: func() any {
			for _, c := range compatCases() { // a value of its own in each process
				if c.name == name {
					return c.handler
				}
			}
			return nil
		}})
	}
	return cases
}
