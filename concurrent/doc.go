// Package concurrent is the lmigo runtime: it serves up to
// AWS_LAMBDA_MAX_CONCURRENCY invocations of one handler at once in a single
// Lambda execution environment.
//
// A function moves from aws-lambda-go by changing one line:
//
//	lambda.Start(handler)      // before
//	concurrent.Start(handler)  // after
//
// and so do its options, unchanged: lambda.StartWithOptions(handler,
// opts...) becomes [StartWithOptions](handler, opts...) with the same
// lambda.Option values, and lambda.StartHandlerFunc [StartHandlerFunc].
//
// Every handler form lambda.Start accepts is accepted here, plus [RawHandler],
// which reads the payload bytes and writes its response into a buffer of
// its slot.
//
// [NewHandler] is the drop-in for aws-lambda-go's lambda.NewHandler, for
// tests and for code that invokes a handler itself: the same adapter as
// the runtime's, with the JSON options and [WithCodec]. Its Invoke is safe
// for concurrent use and returns bytes the caller owns. lambda.NewHandler's
// Invoke is not: it returns the bytes of a pooled buffer that it puts back
// before returning, which the next call may overwrite while the caller
// still reads them. The options of a Runtime (environment, logger,
// contexts, SIGTERM) are ignored by NewHandler. Its Invoke returns bytes,
// so it reads a reader result whole: up to 6 MiB, and past that fails
// with ErrResponseTooLarge.
//
// # Exactly once
//
// Every invocation the Runtime API hands out (its request ID read from
// /next) gets exactly one answer, a response or an error, carrying its own
// bytes and echoing its Lambda-Runtime-Invocation-Id, whatever the handler
// does (returns, fails, panics, calls runtime.Goexit, replaces a
// RawHandler's out.B) and whatever the Runtime API does (refuses an answer,
// resets, cuts an answer midway, a shutdown comes). One file keeps that
// promise: answer.go, through which every path ends an invocation. It
// knows whether the invocation is answered, and when the intended answer
// cannot be sent for a reason on the runtime's side (a header value, a
// size) it sends an error answer the Runtime API accepts instead; what is
// replaced, and how, is listed there. Once the shutdown begins no poll is
// queued or sent, and answers are posted within the shutdown budget.
//
// An answer whose connection ends (reset, closed) before the Runtime API's
// reply may have been lost with it: it is posted once more on a fresh
// connection, from the same bytes, and the slot polls again only after
// that. If the Runtime API had taken the first post, it refuses the second
// (400, or 410 once the invocation is over): that is expected, and logged
// at INFO, not as a refusal. A stream cannot be read twice: its invocation
// gets an /error of type Runtime.StreamInterrupted instead, which the
// Runtime API likewise refuses if it had the stream.
//
// The runtime never keeps, writes to or lends again an array it did not
// lend: a RawHandler's response found in another array (one of its own,
// shared by all invocations, or the payload) is sent from there, read
// until the Runtime API has accepted the answer (it may be posted again,
// above), and then forgotten.
//
// Nothing a handler is lent outlives its invocation. Once it returns (a
// streamed io.WriterTo result: once WriteTo returns) it must not keep the
// io.Writer given to WriteTo, the http.ResponseWriter of package
// lambdahttp, or a RawHandler's out. A goroutine it left behind that uses
// one anyway gets an error for the late call and never reaches another
// invocation's answer: Write to the io.Writer returns [ErrInvocationEnded];
// Write to the ResponseWriter, and its Flush through
// http.ResponseController, io.ErrClosedPipe (Header is then a map that
// goes nowhere, WriteHeader and Flush do nothing). A RawHandler's out is
// the invocation's own and is emptied when it returns: a late Write
// appends to an array of its own, never sent; it cannot return an error,
// as Buffer is bytebufferpool.ByteBuffer, whose Write never fails. What no
// runtime can guard is a slice: the arrays of a RawHandler's payload and
// out.B are reused, so a slice of them kept past the return reads or
// writes other invocations' bytes.
//
// # Slots
//
// The runtime owns a fixed number of slots (limits.Config.Slots, at most
// N). A slot is one keep-alive connection to the Runtime API plus the
// request and response buffers of one invocation, and one goroutine: it
// polls (or reads the poll queued behind its last answer), serves what it
// polled, answers, and goes round again. A slot is one poll or one
// invocation at a time, so outstanding polls plus invocations in flight
// never exceed N, and an invocation never changes goroutine, nor waits
// inside the process. The slots' goroutines run in a bounded pool
// (package pool), which starts a slot again on a fresh goroutine when a
// handler ends its own with runtime.Goexit. Its size is the slots plus
// LMIGO_MAX_OVERRUNS, the slots that may replace one whose handler
// overran its deadline (Failures).
//
// # Contexts
//
// The handler's context carries the invocation deadline (it is cancelled at
// the deadline), a *lambdacontext.LambdaContext, the trace ID
// ([TraceID]) and the tenant ID. The process-wide _X_AMZN_TRACE_ID is set
// only when the runtime serves one invocation at a time.
// [AvailabilityZoneID] gives the execution environment's zone, read once
// from Lambda's metadata endpoint.
//
// # Responses
//
// A buffered response is posted once, with its Content-Length: a body over
// 4 KiB is written to the socket from where it lies (writev), a smaller
// one is copied behind its headers so that both go in one write. Before
// that write, a response body is copied in user space, per path
// (TestResponseCopies and TestStreamedResponseCopies fail on one copy
// more):
//
//	path                                 copies  why
//	json.RawMessage result, compact (1)  0       posted from the handler's own bytes
//	RawHandler                           0       it writes into the slot's buffer, posted from there
//	io.Reader result, io.WriterTo (2)    0       streamed: it writes itself out, one chunk per Write (writev)
//	io.Reader result, other              1       streamed: each Read fills the slot's 32 KiB chunk buffer
//	typed result (3)                     1       encoding/json encodes into its own pooled buffer, then
//	                                             json.Encoder copies that into the slot's buffer
//	lambda.Handler                       0       posted from its own bytes: they must not change once
//	                                             Invoke has returned (aws-lambda-go posts them so too)
//	lambda.NewHandler(fn), aws-lambda-go 1 + fn  its Invoke returns a pooled buffer it has put back
//	                                             already; it is run through fn and that buffer copied
//	                                             before it goes back (callInvoker)
//	NewHandler(fn)                       as fn   it is run as fn itself, not through Invoke
//
// (1) With the default options (no WithSetEscapeHTML, no WithSetIndent),
// a json.RawMessage that is already compact, valid JSON is what
// aws-lambda-go's encoder would send unchanged; it is checked in one pass
// (what json.Valid accepts, without whitespace; faster than json.Valid
// over the long strings large bodies are made of) and never copied.
// Otherwise it is a typed result. The runtime reads a returned
// json.RawMessage until the Runtime API has accepted the answer (it may
// post it again, see Exactly once): do not modify it after returning it
// (returning the same bytes from several invocations at once is fine). (2) One that writes from its own bytes, as *bytes.Reader and
// *bytes.Buffer do; *strings.Reader (a socket takes only []byte) and
// *os.File write through the chunk buffer: one copy. (3) Any other value,
// a []byte too: it encodes as a base64 JSON string, as aws-lambda-go sends
// it. The encoding is the one pass a typed result cannot avoid; the copy
// after it is encoding/json's (no API of it encodes into a caller's
// buffer). A codec chosen with [WithCodec] or LMIGO_JSON_CODEC appends to
// the slot's buffer itself (package codec).
//
// A request payload is read once, into the slot's request buffer (from the
// socket; only the bytes that arrived with the headers are copied out of the
// connection's read buffer), and decoded from there: a typed event by
// json.Unmarshal over that buffer (json.Decoder, which copies, only for
// WithUseNumber, WithDisallowUnknownFields or a payload that is not one valid
// JSON value), or by the chosen codec's Decode; a RawHandler gets the buffer
// itself, valid until it returns; a json.RawMessage event and a
// lambda.Handler's payload are copied once, since the handler may keep them
// (aws-lambda-go gives each invocation a slice of its own) and the buffer is
// reused.
//
// Each slot keeps at most LMIGO_BUFFER_RETAIN_BYTES of request and
// response buffer between invocations (limits.Config.BufferRetainBytes);
// a buffer that grew past it is dropped when its invocation ends.
//
// Once no invocation has been in flight for about 2 s (idleFreeAfter), the
// runtime hands the memory freed since the last burst back to the OS
// (debug.FreeOSMemory), once per burst, and again while the goroutines'
// stacks still shrink: a GC halves a parked goroutine's stack at most
// once, and a slot's goroutine keeps the stack a deep handler grew.
//
// Run sets the soft memory limit (debug.SetMemoryLimit) to
// LMIGO_MEMORY_LIMIT_FRACTION of AWS_LAMBDA_FUNCTION_MEMORY_SIZE when
// GOMEMLIMIT is unset and the size is known. With any limit set, new
// invocations are admitted by memory: from a live heap of 85 % of the limit
// until it is below 70 %, slots whose invocation ends do not poll again and
// free slots wait, so Lambda throttles here and retries elsewhere instead
// of the environment being killed for memory; invocations in flight and
// polls already sent are untouched (admission.go). Every hold has an end:
// with nothing in flight waiting frees nothing, so one slot is let through
// and invocations are served one at a time until the live heap is below
// 70 % (docs/memory.md has the bounds). While holding, a GC is forced when
// the hold begins and after each invocation ends (at most every 20 ms), and
// every second while invocations run; never while nothing runs and nothing
// has ended.
//
// # Streaming
//
// A result that aws-lambda-go sends as the bytes of a reader (an io.Reader
// that does not encode as JSON, or encodes as {}: events'
// LambdaFunctionURLStreamingResponse and APIGatewayProxyStreamingResponse,
// a *strings.Reader, an *os.File...) is streamed: posted with
// Lambda-Runtime-Function-Response-Mode: streaming, chunked, one chunk per
// Read (per Write for an io.WriterTo, which writes itself out), while the
// handler's context is still live, then closed if it is an io.Closer.
// Other results are buffered. A lambda.Handler that is a [StreamInvoker]
// (a wrapper: oteltrace.Handler) is run through InvokeStream, so that what
// the handler it wraps streams is streamed, with the same content type,
// and the rest is buffered. Each slot streams on its own
// connection, so streams never wait for each other. LMIGO_MAX_RESPONSE_BYTES
// bounds buffered responses only; the platform's limits bound a stream. A
// read error (or a panic in Read) before the first byte fails the
// invocation as a handler error would; after it, the error type and
// document go in the trailers (the document cut to rapi.MaxStreamErrorBody).
//
// # Failures
//
// A handler error or panic becomes an /error for that invocation only; the
// process goes on. Every /error carries
// Lambda-Runtime-Function-XRay-Error-Cause, which Lambda adds to the trace
// under active tracing: the working directory, the exception's type,
// message and stack, the stack's distinct paths, byte for byte what
// aws-lambda-go sends for the same error document, with a DEL byte
// escaped (\u007f) so that the header stays valid; a cause of 1 MiB or
// more, which aws-lambda-go leaves out, is cut to 64 KiB (what the Runtime
// API keeps): the type, the start of the message, no stack; so is one that
// would not fit the answer's header beside request and invocation IDs of
// kilobytes (xraycause.go). 400, 410 and 413 answers of the Runtime API end that
// invocation only: logged at WARN with its request ID (at INFO for a
// second post, see Exactly once), and the slot goes round again.
//
// A handler that ignores its context (cancelled at the deadline) keeps
// its goroutine until it returns, as on LMI, but not its slot: once its
// invocation is past its deadline by LMIGO_OVERRUN_GRACE (500 ms; the
// platform has answered the caller "Task timed out" by then, and counts
// the invocation over), the runtime logs a WARN with its request ID,
// deadline, time past it and its goroutine's stack (cut), and a new slot,
// with its own goroutine, connection and buffers, polls in its place. The
// old slot keeps what it had, lent to nobody else; when its handler
// returns, its answer is posted with no poll behind it (the 410 is logged
// with its request ID) and the slot is released: its goroutine leaves the
// pool, its connection closes, its buffers go. At most LMIGO_MAX_OVERRUNS
// slots (the slot count by default) are replaced at once; a slot beyond
// that bound keeps its handler until it returns, and reaching the bound is
// logged once with the count. When every slot has been held so for
// LMIGO_WEDGED_EXIT (10 s; 0 or off: never), the environment serves
// nothing while it looks alive: the runtime writes one FATAL line naming
// each hung request ID, how long past its deadline, and its handler's
// stack, cut to keep the line within 32 KiB, writes the last metrics
// document, and exits 1, so that Lambda replaces the environment. The
// watch costs an invocation one atomic store and one compare-and-swap; a
// deadline far ahead (90 minutes) is never mistaken for an overrun.
//
// An answer to /next that cannot be used is never fatal: without a usable
// request ID there is nothing to answer, and it is skipped (logged);
// with one, the invocation gets an /error with a clear type
// (Runtime.InvalidDeadline, Runtime.InvalidClientContext,
// Runtime.InvalidCognitoIdentity, Runtime.RequestTooLarge,
// Runtime.InvalidInvocation for headers over rapi's bounds or that do not
// parse, Runtime.TruncatedInvocation for an answer cut off or stalled
// midway). Transport errors and malformed answers on /next are retried
// with capped, jittered exponential backoff (5 ms to 500 ms per slot),
// and the warning about them is written at most once a second for the
// whole runtime, with a count, then once more when polling works again. A
// 5xx from the Runtime API means the environment is broken: Run returns an
// error wrapping ErrRuntimeAPI after one ERROR line saying why, and Start
// exits with status 1. So does a 4xx to /next. A poll sends nothing that a
// retry could change (no body, no request ID): the Runtime API's
// specification gives /next only 200, 403 and 500, and the emulator answers
// 403 when the environment's state forbids the runtime to become ready
// (rapi/handler/invocationnext.go: init was cancelled); a 404 or 405 says
// that AWS_LAMBDA_RUNTIME_API does not serve the Runtime API. Neither
// passes, and a runtime that polled on for ever would hold an environment
// that Lambda counts alive and that serves nothing; exiting hands it back,
// as aws-lambda-go does on any failed /next.
//
// # Logs and metrics
//
// [Logger] returns the invocation's zap logger; its lines are one JSON
// object each in Lambda's shape (timestamp, level, message, requestId,
// traceId, tenantId) and are written with one locked write, so lines of
// concurrent invocations never interleave. [SlogHandler] and [Slog] give
// log/slog users the same lines. Every line the runtime's logger writes,
// the handler's included, is at most 32 KiB (maxLogLine): the emulator's
// copy of a runtime's output stops at the first line over 64 KiB, and the
// environment stalls after it. A longer line is cut: in JSON its longest
// strings first, each ending in "…[cut N bytes]", then if need be its last
// fields, replaced by "truncated"; it stays one valid JSON object. The
// /error keeps the whole message, up to its 1 MiB. The runtime's lines
// never quote the caller's data: an event that does not decode is logged
// with the field, the Go type and the kind of JSON value (or the offset
// of a syntax error), while the /error carries encoding/json's message as
// aws-lambda-go sends it. A logger given with [WithLogger] writes the
// handler's lines as its own core does; the runtime's own lines through
// it have their message and values cut to keep the bound. With LMIGO_METRICS=emf the runtime writes
// aggregated metrics in CloudWatch Embedded Metric Format once per
// LMIGO_METRICS_INTERVAL and once at shutdown, and once more before a
// wedged environment exits.
//
// # Fan-out and metrics
//
// [Go] starts work that belongs to the handler's invocation: at most 64
// functions at once per invocation (maxWork; the slots' pool is kept for
// slots), waited for, with the invocation's context live until its
// deadline, when the handler has returned and before the answer is posted.
// A panic in one fails that invocation only, as a handler's panic does
// (errorType the panic value's type, the stack; logged with the request
// ID), whether or not the handler called [Wait]; an error it returned that
// no Wait took fails it too. A streamed answer waits for the work when
// its reader ends: the work's failure goes in the stream's error trailers,
// after the bytes streamed so far; after a stream that ended otherwise
// (its reader failed, its connection was lost) it is logged. [GoDetached]
// starts work that may outlive the invocation, its panics recovered and
// logged.
//
// Package concurrent/metrics records the handler's own metrics in its
// invocation; they are written at the same point, after the work and
// before the answer, as EMF lines on stdout (each at most maxLogLine,
// written whole, never beside another invocation's). An invocation that
// records nothing and starts nothing allocates nothing for either.
//
// # Shutdown
//
// Run returns when its context is cancelled: polls stop, invocations in
// flight get up to limits.Config.ShutdownTimeout to finish (500 ms by
// default, inside the ~600 ms Lambda allows before SIGKILL), one INFO line
// "runtime stopped" gives the cause and what was left in flight, the log
// is synced, and Run returns. The Runtime API's reply to each slot's last
// answer, which the slot's next poll would have read, is read within the
// budget too: an answer whose reply does not come in time is logged at
// INFO as not confirmed (it went out whole), never as refused. Start cancels on SIGTERM and SIGINT and exits
// 0 after a clean shutdown. Lambda sends SIGTERM only when an extension is
// registered: [WithSIGTERM] or LMIGO_SIGTERM=1 registers an internal one
// during init. WithSIGTERM also takes cleanup functions, run once each, in
// order, after the drain and within the budget (the last fifth of it is
// theirs), as aws-lambda-go's lambda.WithEnableSIGTERM runs its own.
//
// # Differences from aws-lambda-go
//
// Handlers, events, JSON bytes, error documents, contexts and options are
// aws-lambda-go v1.55.1's; TestAWSCompat runs its test cases through both
// runtimes and fails on any difference but these (README.md, "What
// differs", has what the caller sees of each):
//
//   - Every /error whose errorType is not empty carries it as
//     Lambda-Runtime-Function-Error-Type (Function.InvalidErrorType when no header
//     can carry it); aws-lambda-go sends no such header, which the Runtime
//     API reads as Runtime.Unknown. The Runtime API keeps a type of the
//     form Runtime.X or Function.X and reads any other as Runtime.Unknown
//     (Function.Unknown for Function.Y): an errorString reads the same from
//     both, a Function.MyError does not.
//   - No invocation ends the process: after a panic, or an error returned
//     as a messages.InvokeResponse_Error with ShouldExit, aws-lambda-go
//     exits (status 1).
//   - A panic's stack begins at the function that panicked; aws-lambda-go's
//     begins with its own recover (lambdaPanicResponse, the deferred call,
//     runtime.gopanic), and the frames below the handler are each runtime's.
//   - An invalid handler fails init (Runtime.InvalidHandler, exit 1);
//     aws-lambda-go starts and fails every invocation with the validation
//     error, as errorString.
//   - An invocation whose deadline, client context or Cognito identity does
//     not parse fails as Runtime.InvalidDeadline,
//     Runtime.InvalidClientContext or Runtime.InvalidCognitoIdentity;
//     aws-lambda-go sends errorString and the parser's message.
//   - A reader result is streamed with Lambda-Runtime-Function-Response-Mode:
//     streaming (see Streaming); aws-lambda-go posts the same bytes without
//     the header.
//   - A lambda.Handler's ContentType() is its response's content type;
//     aws-lambda-go sends application/octet-stream for any lambda.Handler
//     but lambda.NewHandler's own value.
//   - SIGTERM drains the invocations in flight, runs the lambda.WithEnableSIGTERM
//     (WithSIGTERM) callbacks and exits 0 (a goroutine of the program that
//     the same signal woke may not run before the exit: cleanup belongs in
//     the callbacks), and the internal extension is named lmigo;
//     aws-lambda-go runs the callbacks at once and serves on
//     until SIGKILL, is killed by SIGTERM without callbacks, and names its
//     extension GoLangEnableSIGTERM.
//   - The X-Ray error cause escapes a DEL byte and cuts one of 1 MiB or
//     more (see Failures); with either, aws-lambda-go sends none (a DEL
//     fails its post, and its process exits).
//   - An error document over 1 MiB is cut to fit (answer.go);
//     aws-lambda-go's is refused with 413, and its process exits.
package concurrent
