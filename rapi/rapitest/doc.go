// Package rapitest is a fake AWS Lambda Runtime API with the semantics of
// Lambda Managed Instances (LMI), served over HTTP/1.1 on a loopback port,
// for testing a handler through lmigo as net/http/httptest is for net/http:
// start a Server, point a concurrent.Runtime at it ([Server.Env]), invoke
// it at N concurrent invocations, and read each answer ([Result]) and the
// accounting ([Server.Stats]: every invocation answered exactly once, polls
// plus invocations in flight within N). The runtime's own tests and the
// load test use it too, so there is one fake.
//
// A test that runs a runtime waits for its Run to return before it ends,
// so that nothing it started outlives it. A function's own tests use
// concurrent/lambdatest, which does this in one call; its VerifyTestMain
// is goleak's, past the default pool that ants (lmigo's goroutine pool)
// starts when it is imported.
//
// # Model
//
// Every GET /2018-06-01/runtime/invocation/next is one free slot of the
// runtime. [Server.Invoke] hands its invocation to one pending /next; when
// none is pending it fails at once with [ErrThrottled], as LMI rejects such an
// invoke with Runtime.Unavailable (unless [Options].Queue asks it to wait).
// The sum of pending /next and invocations the runtime still holds must never
// exceed [Options].MaxConcurrency; the server does not refuse an excess poll,
// it records it ([Stats].Violations) and the high-water marks
// ([Stats].MaxOutstanding, [Stats].MaxPolls).
//
// An invocation is held by the runtime from hand-out until the runtime posts
// /response or /error for it, whatever the outcome (accepted, 400 after its
// caller gave up, 413), or until its deadline, whichever comes first: as on
// the platform, an invocation that timed out is over and no longer counts
// toward N, though its handler may still run (its late post gets 410), so
// that a runtime may poll in its place; a poll beyond N while the
// invocations it holds are live is a violation. The deadline decides, by
// the server's clock, even before the timer that ends Invoke has fired.
// Not held either is an invocation whose request ID
// the runtime cannot have read (a fault cut or replaced that part of its
// /next reply, or Request.Headers removed the ID or made it unusable in a
// URL path): the runtime does not hold that one. A /next whose client has gone away stays registered, as
// on the platform: the invocation handed to it is lost and ends by its
// deadline.
//
// Each post must echo the Lambda-Runtime-Invocation-Id its invocation was
// handed out with, as the emulator checks it: a post whose echo names
// another invocation is refused with 410 and counted ([Stats].CrossWired);
// the invocation stays open, and a later post with the right echo answers
// it. A post without the header is accepted, as by the emulator, and
// counted ([Stats].NoEcho). [Options].Notice names the request ID of such
// posts, and of duplicate, unknown and late ones.
//
// Each invocation ends exactly once, counted in exactly one of
// Responses, Errors, Oversized and Truncated, when the runtime's post ends
// it ([Stats.Answered]), or Timeouts, Canceled and Aborted ([Stats.Ended]
// counts all seven); a later post for it is answered 410 (the first one
// after a timeout) or 400. The deadline decides a timeout: a post read in
// full at or after it is late, even when the timer that ends Invoke has not
// fired yet. A runtime answered every invocation exactly once when Answered
// equals Invocations and Duplicates is 0; Ended equals Invocations once
// every Invoke has returned, whatever the runtime did.
//
// # Faults
//
// A [Fault] scripts a misbehaving Runtime API: a status code, a malformed
// status line or header, a reply cut off mid-body, a dropped or reset
// connection (after reading a post whole, with ReadBody), a peer that stalls before or in the middle of its reply. It is
// injected by call index ([Options].Faults, which sees every request and
// may pick by path, so by request ID for posts) or by invocation
// ([Request].Fault for the /next reply that hands it out, [Request].PostFault
// for the reply to the post that ends it). [Options].Addr fixes the port, so
// that a runtime can be started before its Runtime API exists. Every
// injected fault is counted in [Stats].Faults, and the accounting above
// holds under faults: an invocation whose /next reply was faulted ends by
// its deadline, or by the runtime's post if it could read the request ID.
//
// # Streaming
//
// A /response with Lambda-Runtime-Function-Response-Mode: streaming and a
// chunked body is read as the emulator reads it ([Result].ResponseMode);
// error trailers after its last chunk end the invocation as a function
// error ([FunctionError].Trailer), and any other response mode ends it
// with [ErrorTypeInvalidResponseMode].
//
// # Extensions
//
// The Extensions API serves internal extensions as the platform does for a
// runtime that only wants SIGTERM: POST /2020-01-01/extension/register with
// a name and no events, before the first /next (later it is refused, as
// registration closes with init), then GET /2020-01-01/extension/event/next,
// held open until Close ([Stats].Extensions, [Stats].ExtensionPolls,
// [Stats].ExtRefused).
//
// # Blocking
//
// /next blocks until an invocation is assigned or [Server.Close] is called.
// [Server.Invoke] blocks until the invocation ends, its context is done or
// the server closes, and no longer: a /next reply still being written then
// (the runtime does not read it) is cut, and the runtime loses it, as when
// its connection breaks. /response and /error reply 202 only after the
// result has been handed to the waiting Invoke, as on the platform.
// [Server.WaitPolls] blocks until enough /next are pending (init is done);
// [Server.WaitPoll] until one is, for at most a given time (a throttled
// caller waiting to retry).
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
// [Server.Close] answers every pending /next with 500 (what the emulator does
// to polls it cancels; a runtime must read it as "container broken"), makes
// pending and later Invoke calls return [ErrClosed], shuts the HTTP server
// down and returns once every handler goroutine has returned.
package rapitest
