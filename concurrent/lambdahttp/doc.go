// Package lambdahttp serves an http.Handler (a ServeMux, a chi or gin
// router...) through lmigo behind every HTTP front door of Lambda: API
// Gateway REST APIs (payload 1.0), HTTP APIs (payload 1.0 and 2.0),
// Function URLs and Application Load Balancers (single-value and
// multi-value headers), buffered or streamed, at any concurrency: each
// invocation gets its own *http.Request and http.ResponseWriter, and
// nothing is shared between invocations but h. The door is told by the
// event's shape; one handler serves them all.
//
//	concurrent.Start(lambdahttp.Handler(mux))          // buffered: every door
//	concurrent.Start(lambdahttp.StreamingHandler(mux)) // Function URL RESPONSE_STREAM, REST API STREAM
//
// StreamingHandler returns a concurrent.StreamInvoker: the runtime calls
// its InvokeStream, which decodes the event from the payload.
//
// # Requests
//
// The handler gets the request net/http.Server would have read for the
// request the door passes on, each door by its own encoding rules
// (docs/http-doors.md cites AWS's documentation for each):
//
//	door           path                     query                              headers
//	REST API       path, encoded            multiValueQueryStringParameters,   multiValueHeaders
//	                                        decoded by the door: re-encoded
//	HTTP API 1.0   path, decoded            as REST                            multiValueHeaders
//	HTTP API 2.0   rawPath, decoded         rawQueryString, as sent            headers (repeats joined by
//	                                                                           commas), cookies as Cookie
//	Function URL   rawPath, encoded         rawQueryString, as sent            as HTTP API 2.0
//	ALB            path, encoded            (multiValue)QueryStringParameters, headers, or multiValueHeaders
//	                                        as sent: not decoded by the door   in multi-value mode
//
// An encoded path is parsed as a request line is (URL.Path decoded,
// URL.RawPath kept); a decoded one is URL.Path itself, so an HTTP API path
// with a literal % (/discount/100%) is served, not refused. Query keys
// come in sorted order where the door passes a map; each key's values in
// the order sent. Header names are canonical, Host becomes r.Host (the
// door's domainName without one) and leaves r.Header, as net/http.Server
// does. RemoteAddr is the source IP: requestContext.identity.sourceIp
// (payload 1.0), requestContext.http.sourceIp (2.0), the last address of
// X-Forwarded-For, which the load balancer appends (ALB). The scheme is
// https, or X-Forwarded-Proto's http behind a load balancer. A body
// flagged isBase64Encoded is decoded (400 when it is not base64). Proto is
// the one the door names, else HTTP/1.1.
//
// Limits: the doors bound what they pass on (API Gateway's headers at
// 10 KiB, a load balancer's at 64 KiB and its body at 1 MB), and the
// runtime refuses a payload over LMIGO_MAX_REQUEST_BYTES (6 MiB, the
// platform's bound) with Runtime.RequestTooLarge before this package sees
// it. An event made by hand past the doors' bounds gets an answer still:
// a request line and headers over 1 MiB (net/http.Server's default
// MaxHeaderBytes) 431, a path that does not parse, does not begin with /,
// or an event without a method (no requestContext in a 2.0 event) 400.
// Query parameters past net/url's bound (10,000) are dropped by
// URL.Query, as behind net/http.Server.
//
// r.Context() is the invocation's context: its deadline, request ID
// (concurrent.RequestID), lambdacontext and trace ID. [Request] (payload
// 2.0), [ProxyRequest] (payload 1.0) and [ALBRequest] return the event
// itself, with its requestContext.
//
// # Buffered answers
//
// Handler's answer is written straight into the runtime's buffer, in the
// shape the door reads, with no member it does not document:
//
//	payload 1.0 (REST, HTTP API 1.0)  statusCode, headers (a header of one value),
//	                                  multiValueHeaders (Set-Cookie, headers of several values),
//	                                  body, isBase64Encoded
//	payload 2.0 (HTTP API, URL)       statusCode, headers (values joined by commas),
//	                                  cookies (the Set-Cookie values), body, isBase64Encoded
//	ALB                               statusCode, statusDescription ("201 Created"), isBase64Encoded,
//	                                  and headers or, in multi-value mode, multiValueHeaders
//
// A load balancer in single-value mode reads one value a header: a
// header's values are joined by commas, as HTTP allows, except
// Set-Cookie's, of which only the first goes (enable multi-value headers
// on the target group to send several cookies). The head is what the
// header map holds when the handler returns. A missing Content-Type is
// sniffed from the body (http.DetectContentType), as net/http does. A
// handler that writes nothing answers 200 with no body.
//
// Text or binary: the body goes as a JSON string when [WithText]'s rule
// (by default [IsText]: text/*, JSON, XML, YAML, JavaScript, form types,
// +json/+xml/+yaml, no Content-Encoding) says its Content-Type is text and
// it is valid UTF-8; otherwise in base64 with isBase64Encoded, so that
// binary bodies arrive intact. A REST API decodes it for the client only
// when the request's Accept header matches one of the API's binary media
// types; otherwise the client gets the base64 text: list the types (or
// */*) there, or have WithText call such bodies text.
//
// The whole document is bounded by [WithMaxResponseBytes] (6 MiB, the
// platform's and LMIGO_MAX_RESPONSE_BYTES's default; 1 MiB for a load
// balancer, whose bound is 1 MB, unless the option is given): Write fails with
// [ErrResponseTooLarge] once the body cannot fit, and the client gets a
// 500 whose plain-text body says so (logged at ERROR), rather than an
// answer the platform would refuse. The head is bounded by
// [WithMaxHeaderBytes] (64 KiB) in both modes, with a 500 likewise.
//
// # Streamed answers
//
// StreamingHandler streams where the door streams: a Function URL in
// RESPONSE_STREAM mode and a REST API whose integration streams (response
// transfer mode STREAM, a payload 1.0 event in). Its reader writes the
// application/vnd.awslambda.http-integration-response stream: the JSON
// head, eight NUL bytes, then the body. A Function URL's head (statusCode,
// headers, cookies) is byte for byte what aws-lambda-go's lambdaurl sends
// for the same handler; a REST API's (statusCode, headers,
// multiValueHeaders, cookies: a header of one value in headers, of several
// in multiValueHeaders, Set-Cookie's in cookies) what
// events.APIGatewayProxyStreamingResponse writes. Neither sniffs a
// Content-Type. The doors that do not stream (HTTP APIs, told by an
// execute-api domain, and load balancers) get the buffered answer in their
// shape; an HTTP API on a custom domain cannot be told from a Function URL
// by its 2.0 event and is streamed: serve it with Handler. No goroutine is
// started: the handler runs inside the reader's WriteTo, which the runtime
// calls on its worker while the invocation is live. The head goes with the first body bytes, the
// first Flush or the end of the handler, as net/http sends its header;
// writes under 4 KiB are gathered into 16 KiB chunks until a Flush
// (http.Flusher and http.ResponseController work), larger ones go out as
// they are. The platform's streaming limits apply to the body. The
// reader's Read, for a caller that only reads (lmigo calls WriteTo),
// gathers the whole stream in memory first, at most WithMaxResponseBytes
// of it: past that the handler's Write and then Read fail with
// ErrResponseTooLarge.
//
// # After the handler returns
//
// The ResponseWriter is the invocation's own, never pooled, and dead once
// ServeHTTP returns or panics: the pooled buffers behind it serve other
// invocations by then, and it no longer reaches them. A goroutine the
// handler left behind gets io.ErrClosedPipe from Write and from
// http.ResponseController's Flush, as from aws-lambda-go's lambdaurl; from
// Header a fresh map that goes nowhere; nothing from WriteHeader and
// Flush. No late call panics or reaches another invocation's answer,
// buffered or streamed; a call racing with the return either lands in its
// own answer or fails as a late one.
//
// # Panics
//
// A panic in the handler ends its invocation only, and is logged at ERROR
// with its stack on the invocation's logger. Buffered, and streamed before
// any byte left, the client gets 500 "Internal Server Error" (text/plain):
// an HTTP client should get an HTTP answer, the same from API Gateway and
// Function URLs (a function error would be a 500 from one and a 502 from
// the other, and could not be sent once a stream has begun). After the
// first byte of a stream the status is out: the stream ends with the
// runtime's error trailers carrying the *concurrent.PanicError.
// A payload that is not the event of an HTTP front door (an SQS batch,
// {}, {"foo":1}, an authorizer's or a WebSocket API's event) fails the
// invocation with an [*EventError] (errors.Is ErrEvent; the error type the
// caller reads is "EventError"), and never reaches the http.Handler. An
// HTTP front door's event is told by its shape: requestContext.elb (a load
// balancer), version "2.0" or requestContext.http.method (payload 2.0),
// httpMethod (payload 1.0: an HTTP API's when version is "1.0", else a
// REST API's).
package lambdahttp
