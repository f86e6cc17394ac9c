// Package concurrent is the lmigo runtime: it serves up to
// AWS_LAMBDA_MAX_CONCURRENCY (N) invocations of one handler at once in one
// Lambda execution environment, each in a slot of its own.
//
// A function moves from aws-lambda-go by one line:
//
//	lambda.Start(handler)      // before
//	concurrent.Start(handler)  // after
//
// [StartWithOptions] and [StartHandlerFunc] take aws-lambda-go's
// lambda.Option values unchanged. Every handler form lambda.Start accepts
// is accepted, plus [RawHandler], which writes into its slot's buffer.
// [NewHandler] is the drop-in for lambda.NewHandler, safe for concurrent
// use. A program that owns main calls [New] and [Runtime.Run].
// [WithLambdaOptions] makes lambda.Option values one Option for [New], so
// a test (concurrent/lambdatest) runs the handler with production's options.
//
// What the runtime promises:
//
//   - Every invocation gets exactly one answer, echoing its
//     Lambda-Runtime-Invocation-Id, whatever the handler does.
//   - A panic or an error ends its invocation alone; the process serves on.
//   - Nothing a handler is lent outlives its invocation: a late Write gets
//     [ErrInvocationEnded] and never reaches another answer.
//   - A handler that ignores its deadline loses its slot, not the
//     environment: a new slot polls in its place.
//   - On SIGTERM the invocations in flight drain within
//     LMIGO_SHUTDOWN_TIMEOUT, then the process exits 0.
//
// The handler's context carries the deadline, a
// *lambdacontext.LambdaContext, [RequestID], [TraceID] and [TenantID].
// [Logger] and [Slog] write Lambda's JSON lines with the request ID. [Go]
// and [Wait] fan work out inside the invocation. [AvailabilityZoneID]
// names the environment's zone.
//
// Where each topic lives, from the module's root:
//
//	docs/design.md         slots, one invocation's way, exactly once, failures, shutdown
//	docs/memory.md         copies per handler form, buffers, the memory limit, admission
//	docs/streaming.md      streamed responses
//	docs/logging.md        logs, log/slog, trace propagation, metrics
//	docs/observability.md  the report line, profiler labels, leftovers, OOM
//	docs/lmi.md            Go on LMI: shared state, fan-out, panics in goroutines
//	docs/aws-lambda-go.md  what differs from aws-lambda-go; wrappers and routers
//	docs/tuning.md         N per vCPU, the retain cap, the memory limit
//	docs/stability.md      what is stable at v0.x
package concurrent
