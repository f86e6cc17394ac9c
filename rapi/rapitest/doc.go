// Package rapitest is a fake AWS Lambda Runtime API with the semantics of
// Lambda Managed Instances (LMI). It serves HTTP/1.1 on a loopback port. It
// tests a handler through lmigo, as net/http/httptest does for net/http.
// Start a Server and point a concurrent.Runtime at it ([Server.Env]). Invoke
// it N at a time, then read each answer ([Result]) and the accounting
// ([Server.Stats]). It shows every invocation answered exactly once, and
// polls plus invocations in flight within N. The runtime's own tests and the
// load test use it too, so there is one fake.
//
// A test that runs a runtime waits for its Run to return before it ends,
// so that nothing it started outlives it. A function's own tests use
// concurrent/lambdatest, which does this in one call; its VerifyTestMain
// is goleak's, past the default pool that ants (lmigo's goroutine pool)
// starts when it is imported and net/http's keep-alive connections.
//
// # Model
//
// Every GET /2018-06-01/runtime/invocation/next is one free slot of the
// runtime. [Server.Invoke] hands its invocation to one pending /next. When
// none is pending it fails at once with [ErrThrottled], unless
// [Options].Queue asks it to wait. LMI rejects it likewise, with
// Runtime.Unavailable. The sum of pending /next and invocations the runtime
// still holds must never exceed [Options].MaxConcurrency. The server does not
// refuse an excess poll. It records it ([Stats].Violations) and the
// high-water marks ([Stats].MaxOutstanding, [Stats].MaxPolls).
//
// An invocation is held by the runtime from hand-out until the first of two
// events. One is the runtime's /response or /error for it, whatever the
// outcome (accepted, 400 after its caller gave up, 413). The other is its
// deadline. As on the platform, an invocation that timed out is over and no
// longer counts toward N, so that a runtime may poll in its place. Its
// handler may still run; its late post gets 410. A poll beyond N while the
// invocations it holds are live is a violation. The deadline decides, by the
// server's clock, even before the timer that ends Invoke has fired. Nor does
// the runtime hold an invocation whose request ID it cannot read. A fault may
// have cut or replaced that part of its /next reply. Or Request.Headers
// removed the ID or made it unusable in a URL path. A /next whose client has
// gone away stays registered, as on the platform: the invocation handed to it
// is lost and ends by its deadline.
//
// Each post must echo the Lambda-Runtime-Invocation-Id its invocation was
// handed out with, as the emulator checks it. A post whose echo names another
// invocation is refused with 410 and counted ([Stats].CrossWired). The
// invocation stays open, and a later post with the right echo answers it. A
// post without the header is accepted, as by the emulator, and counted
// ([Stats].NoEcho). [Options].Notice names the request ID of such posts, and
// of duplicate, unknown and late ones.
//
// Each invocation ends exactly once, in exactly one of seven counts
// ([Stats.Ended]). Responses, Errors, Oversized and Truncated count those the
// runtime's post ended ([Stats.Answered]). Timeouts, Canceled and Aborted
// count the others. A later post for it is answered 410 (the first one after
// a timeout) or 400. The deadline decides a timeout: a post read in full at
// or after it is late, even when the timer that ends Invoke has not fired
// yet. A runtime answered every invocation exactly once when Answered equals
// Invocations and Duplicates is 0; Ended equals Invocations once every Invoke
// has returned, whatever the runtime did.
//
// # Faults
//
// A [Fault] scripts a misbehaving Runtime API. It may send a status code, or
// a malformed status line or header. It may cut a reply off mid-body, or drop
// or reset the connection (after reading a post whole, with ReadBody). Or it
// stalls before or in the middle of its reply. It is injected by call index
// or by invocation. [Options].Faults sees every request and may pick by path,
// so by request ID for posts. [Request].Fault is for the /next reply that
// hands the invocation out, [Request].PostFault for the reply to the post
// that ends it. [Options].Addr fixes the port, so that a runtime can be
// started before its Runtime API exists. Every injected fault is counted in
// [Stats].Faults, and the accounting above holds under faults. An invocation
// whose /next reply was faulted ends by its deadline, or by the runtime's
// post if it could read the request ID.
//
// # Streaming
//
// A /response with Lambda-Runtime-Function-Response-Mode: streaming and a
// chunked body is read as the emulator reads it ([Result].ResponseMode).
// Error trailers after its last chunk end the invocation as a function error
// ([FunctionError].Trailer). Any other response mode ends it with
// [ErrorTypeInvalidResponseMode].
//
// # Extensions
//
// The Extensions API serves internal extensions as the platform does for a
// runtime that only wants SIGTERM. The runtime sends POST
// /2020-01-01/extension/register with a name and no events, before the first
// /next. Later it is refused, as registration closes with init. Then GET
// /2020-01-01/extension/event/next is held open until Close
// ([Stats].Extensions, [Stats].ExtensionPolls, [Stats].ExtRefused).
//
// # Blocking
//
// /next blocks until an invocation is assigned or [Server.Close] is called.
// [Server.Invoke] blocks until the invocation ends, its context is done or
// the server closes, and no longer. A /next reply still being written then
// (the runtime does not read it) is cut. The runtime loses it, as when its
// connection breaks. /response and /error reply 202 only after the result has
// been handed to the waiting Invoke, as on the platform. [Server.WaitPolls]
// blocks until enough /next are pending (init is done); [Server.WaitPoll]
// until one is, for at most a given time (a throttled caller waiting to
// retry).
//
// # Ownership
//
// The server reads Request.Payload until Invoke returns, and no longer: the
// caller may reuse it then. Result.Body and FunctionError.Body are new
// slices owned by the caller. Bodies are read with a bound (cap+1 bytes at
// most), never in full when too large.
//
// # Shutdown
//
// [Server.Close] answers every pending /next with 500, as the emulator does
// to polls it cancels. A runtime must read it as "container broken". Close
// makes pending and later Invoke calls return [ErrClosed]. It shuts the HTTP
// server down and returns once every handler goroutine has returned.
package rapitest
