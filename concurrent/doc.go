// Package concurrent is the lmigo runtime: it serves up to
// AWS_LAMBDA_MAX_CONCURRENCY invocations of one handler at once in a single
// Lambda execution environment.
//
// A function moves from aws-lambda-go by changing one line:
//
//	lambda.Start(handler)      // before
//	concurrent.Start(handler)  // after
//
// Every handler form lambda.Start accepts is accepted here, plus [RawHandler],
// which reads the payload bytes and writes its response into a worker-owned
// buffer.
//
// # Slots
//
// The runtime owns a fixed number of slots (limits.Config.Workers, at most
// N). A slot is one keep-alive connection to the Runtime API plus the
// request and response buffers of one invocation. A poller takes a free slot
// before it calls /next and the slot stays taken until the answer for that
// invocation has been posted, so outstanding polls plus invocations in
// flight never exceed N, and an invocation that was handed out never waits
// inside the process: the worker pool has exactly as many workers as slots.
//
// # Contexts
//
// The handler's context carries the invocation deadline (it is cancelled at
// the deadline), a *lambdacontext.LambdaContext, the trace ID
// ([TraceID]) and the tenant ID. The process-wide _X_AMZN_TRACE_ID is set
// only when the runtime serves one invocation at a time.
//
// # Failures
//
// A handler error or panic becomes an /error for that invocation only; the
// process goes on. 400, 410 and 413 answers of the Runtime API end that
// invocation only. Transport errors on /next are retried with capped,
// jittered backoff. A 5xx from the Runtime API means the environment is
// broken: Run returns an error and Start exits the process.
//
// # Logs and metrics
//
// [Logger] returns the invocation's zap logger; its lines are one JSON
// object each in Lambda's shape (timestamp, level, message, requestId,
// traceId, tenantId) and are written with one locked write, so lines of
// concurrent invocations never interleave. [SlogHandler] and [Slog] give
// log/slog users the same lines. With LMIGO_METRICS=emf the runtime writes
// aggregated metrics in CloudWatch Embedded Metric Format once per
// LMIGO_METRICS_INTERVAL and once at shutdown.
//
// # Shutdown
//
// Run returns when its context is cancelled: pollers stop, invocations in
// flight get up to limits.Config.ShutdownTimeout to finish, then Run
// returns. Start cancels on SIGTERM and SIGINT and exits 0 after a clean
// shutdown.
package concurrent
