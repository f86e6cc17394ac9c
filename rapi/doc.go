// Package rapi is a small HTTP/1.1 client for the Lambda Runtime API, written
// for the hot path of a runtime that serves many invocations at once.
//
// A Client (New) holds what all connections share: the address, the limits,
// and every request prefix, built once. Client.Conn returns a Conn: one
// keep-alive TCP connection, dialed lazily and redialed on the call after a
// failure, so steady-state Next and Respond never open a connection. Give
// each poller or worker its own Conn. Client.InitError uses a connection of
// its own and closes it.
//
// What blocks: Next blocks until the Runtime API hands out an invocation;
// Respond and Fail until the Runtime API has accepted the answer (in LMI,
// until the caller received it). A done context unblocks the call at once by
// putting a past deadline on the connection, which is then dropped; the
// error wraps ctx.Err(). Close, from any goroutine, does the same and ends
// the Conn.
//
// Ownership: a Conn belongs to one goroutine at a time. Next writes into the
// caller's Invocation and reads the body into inv.Payload[:0], growing that
// slice only when it is too small; the caller keeps the slice and may reuse
// it. Respond and Fail read the caller's body while they run and keep no
// reference to it afterwards. Invocation strings are immutable and may be
// kept.
//
// Bounds: the status line and headers are capped at 64 KiB and 100 fields;
// chunk framing and trailers at 64 KiB; the /next body at MaxRequestBytes,
// checked before anything is allocated. A larger body gives
// ErrPayloadTooLarge with the Invocation's headers filled so that the
// invocation can be failed; the body is skipped when under 32 MiB, else the
// connection is dropped. Content-Length is parsed strictly and chunked
// bodies are supported. Connection: close and HTTP/1.0 are honoured.
//
// Errors: non-2xx answers are *StatusError, matching ErrBadRequest (400),
// ErrForbidden (403), ErrGone (410), ErrTooLarge (413) and ErrRuntimeAPI
// (5xx) with errors.Is; network failures wrap ErrTransport; broken framing
// wraps ErrMalformed. A POST is never retried, so a response is never
// posted twice. The one retry is a GET /next that meets a reused connection
// the server had already closed (no byte of answer): it is sent once more on
// a new connection, as the server cannot have registered it.
//
// Shut down by closing each Conn; a Client holds no resources of its own.
//
// The package speaks HTTP itself, without net/http, so that one invocation
// (Next + Respond) costs one allocation for its strings and no other.
package rapi
