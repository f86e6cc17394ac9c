// Package oteltrace traces the invocations of a handler served by lmigo
// with OpenTelemetry, joining the trace Lambda started for each one. It is
// a module of its own, so that the runtime's module does not require
// OpenTelemetry.
//
// Under Lambda Managed Instances one process serves N invocations at once,
// and the process-wide _X_AMZN_TRACE_ID is not set when N > 1: the trace
// header is per invocation, in its context (concurrent.TraceID). [Wrap]
// reads the parent of each invocation's span from there, and [Propagator]
// carries it into outgoing calls.
//
//	h := oteltrace.Wrap(handler, oteltrace.WithTracerProvider(tp))
//	concurrent.Start(h)
//
// # Spans
//
// Each invocation runs in a span of kind server named after the function,
// a child of the span in its trace header ([ParseHeader]), with the FaaS
// attributes of semconv v1.43.0: faas.invocation_id (the request ID),
// cloud.resource_id (the invoked ARN) and cloud.account.id, faas.name,
// faas.version, faas.instance, faas.max_memory, cloud.region,
// cloud.provider, faas.coldstart on the first, cloud.availability_zone,
// and [WithAttributes] (the trigger, which the handler does not tell).
//
// cloud.availability_zone is the zone ID (use1-az1) that
// concurrent.AvailabilityZoneID reads from Lambda's metadata endpoint, as
// the Lambda detector proposed for OpenTelemetry JavaScript sets it
// (opentelemetry-js-contrib#3460): Lambda gives no zone name (us-east-1a,
// the convention's example, and what the EC2 and ECS detectors set). The
// first invocation's span waits for that one local request (at most 1 s,
// or its own deadline); where the endpoint is absent (outside Lambda) or
// fails, spans go without the attribute. The endpoint's variables are
// read from the process environment, not through [WithLookupEnv].
//
// A handler error or panic sets the span's status to Error and records
// it; the invocation fails as it would without the wrapper.
//
// # Ownership
//
// Wrap adapts the handler with concurrent.NewHandler, whose bytes belong
// to the caller, so ending the span or flushing after the handler returned
// cannot change an answer. (aws-lambda-go's lambda.NewHandler returns the
// bytes of a pooled buffer that a concurrent Invoke may overwrite; a
// wrapper that flushes before it returns them sends wrong answers:
// TestFlushEachHazardWithLambdaNewHandler.)
//
// # Flushing
//
// A flush after every invocation, as on-demand Lambda needs because it
// freezes the environment once the answer is sent, makes invocations wait
// for exports; LMI does not freeze an environment between invocations.
// So by default Wrap flushes after each invocation only where
// AWS_LAMBDA_INITIALIZATION_TYPE says the environment is frozen
// (on-demand, provisioned-concurrency, snap-start), and otherwise leaves
// exporting to the span processor: use the SDK's BatchSpanProcessor
// (sdktrace.WithBatcher), which exports in the background. [WithFlushEvery]
// adds a background flush at most every d that no invocation waits for;
// [WithFlushEachInvocation] and [WithoutFlush] choose a policy outright.
// [Handler.Shutdown] flushes and shuts the provider down: call it at
// SIGTERM, once Run has returned (concurrent.WithSIGTERM makes Lambda send
// SIGTERM). BenchmarkFlushPolicy compares the policies.
//
// # Streams and content types
//
// A Handler is a concurrent.StreamInvoker: lmigo runs it through
// InvokeStream, which passes on the wrapped handler's answer as it is, so
// each answer goes out as the same handler served bare sends it, in the
// same response mode and with the same content type. A streamed answer (an
// io.Reader result, lambdahttp.StreamingHandler's) stays a stream, its
// bytes sent as they are read, and its span ends when the stream does: at
// its end, at a read error or a panic in Read (which fail the span), or
// when lmigo closes it before its end (the post failed: that fails the
// span too). Served by a runtime that calls Invoke, which returns bytes, a
// reader result is read whole up to 6 MiB, as concurrent.NewHandler's
// Invoke reads it, and fails past that.
//
// # Errors
//
// An unsupported handler form gives a Handler whose every Invoke fails
// with concurrent.NewHandler's error (wrapping concurrent.ErrInvalidHandler);
// unlike a bare handler, concurrent.New does not refuse it at once.
package oteltrace
