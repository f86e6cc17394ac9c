// Package fakeapi is a fake AWS Lambda Runtime API with the semantics of
// Lambda Managed Instances (LMI), served over HTTP/1.1 on a loopback port.
// The project's tests and the load test driver share it as their Runtime API
// peer.
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
// /response or /error for it, whatever the outcome (accepted, 410 after its
// deadline, 400 after its caller gave up, 413). A /next whose client has gone
// away stays registered, as on the platform: the invocation handed to it is
// lost and ends by its deadline.
//
// Each invocation ends exactly once, counted in exactly one of
// Responses, Errors, Oversized, Truncated, Timeouts, Canceled and Aborted
// ([Stats.Ended]); a later post for it is answered 410 (the first one after a
// timeout) or 400.
//
// # Blocking
//
// /next blocks until an invocation is assigned or [Server.Close] is called.
// [Server.Invoke] blocks until the invocation ends, its context is done or
// the server closes. /response and /error reply 202 only after the result
// has been handed to the waiting Invoke, as on the platform.
// [Server.WaitPolls] blocks until enough /next are pending (init is done).
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
package fakeapi
