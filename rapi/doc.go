// Package rapi is a small HTTP/1.1 client for the Lambda Runtime API, written
// for the hot path of a runtime that serves many invocations at once.
//
// A Client (New) holds what all connections share: the address, the limits,
// and every request prefix, built once. Client.Conn returns a Conn: one
// keep-alive TCP connection, dialed lazily and redialed on the call after a
// failure, so steady-state Next and Respond never open a connection. Give
// each slot of a runtime its own Conn. Client.InitError uses a connection
// of its own and closes it.
//
// What blocks: Next blocks until the Runtime API hands out an invocation;
// Respond, Fail and Stream until the Runtime API has accepted the answer (in
// LMI, until the caller received it; with a lazy answer, Respond and Fail
// only until it is written), Stream also while its body's Read blocks. A done
// context unblocks the call at once by putting a past deadline on the
// connection, which is then dropped (unless it broke no I/O and a poll is
// queued, below); the error wraps ctx.Err(). Close, from any goroutine, does
// the same and ends the Conn.
//
// Ownership: a Conn belongs to one goroutine at a time. Next writes into the
// caller's Invocation and reads the body into inv.Payload[:0], growing that
// slice only when it is too small; the caller keeps the slice and may reuse
// it. Respond and Fail read the caller's body while they run and keep no
// reference to it afterwards, and so does Stream with its io.Reader; with
// a lazy answer, Respond and Fail keep their slices until their answer has
// been read (by Next or ReadAnswer), as they may send them again: the
// caller must not change them until then.
// Invocation strings are immutable and may be kept.
//
// Streaming (Conn.Stream): a response read from an io.Reader is posted with
// Lambda-Runtime-Function-Response-Mode: streaming and chunked framing, one
// chunk per Read, from a 32 KiB buffer the Conn makes once and reuses (one
// per Write, from the body's own bytes, for an io.WriterTo). A
// read error after the first byte ends the body with the declared trailers
// Lambda-Runtime-Function-Error-Type and Lambda-Runtime-Function-Error-Body
// (base64, at most MaxStreamErrorBody bytes of document: the Runtime API
// reads all trailers into 4 KiB); one before the first byte becomes an
// ordinary /error, as nothing was sent. No size limit applies on this side:
// the platform's streaming limits do.
//
// Bounds: the status line and headers are capped at 64 KiB and 100 fields;
// each chunk-size line, and the trailers, at 64 KiB (not the number of
// chunks: the body's limit bounds it); the /next body at MaxRequestBytes,
// checked before anything is allocated. A larger body gives
// ErrPayloadTooLarge with the Invocation's headers filled so that the
// invocation can be failed; the body is skipped when under 32 MiB, else the
// connection is dropped. Content-Length is parsed strictly and chunked
// bodies are supported. Connection: close and HTTP/1.0 are honoured.
//
// Errors: non-2xx answers are *StatusError (its Code says which), matching
// ErrRuntimeAPI for a 5xx with errors.Is; network failures wrap
// ErrTransport; broken framing is an error of its own (the only sentinels
// exported are those the runtime tells apart). A POST is sent again in one
// case only: with a lazy answer, when its connection ends before any byte of
// its answer (below); the caller decides about the others. The other retry
// is a GET /next, written by Next itself, that
// meets a reused connection the server had already closed (no byte of
// answer): it is sent once more on a new connection, as the server cannot
// have registered it. A queued GET is never resent (below).
//
// Pipelining (the queue argument of Respond, Fail and Stream, decided by
// the caller for each post): on LMI, a caller gets its response before the runtime's next /next is
// registered, and an invoke that finds no pending poll is throttled. With
// pipelining, Respond and Fail write GET /next right behind the POST on the
// same keep-alive connection (in the same write for small posts, as one
// more writev part for large ones; Stream in the write that ends the body),
// so the Runtime API sees the poll the moment it has read the answer.
// Stream reads its queue once the body has ended, right before that write:
// a caller that stops polling (a shutdown) while a long stream is written
// sends no poll after it. The Conn remembers the queued poll, and the next Next only reads its
// answer. A Conn holds at most that one poll, after its post, so a runtime
// with one Conn per slot never holds more polls than free slots. While a
// poll is queued, Respond, Fail and Stream refuse with ErrInvalid and write
// nothing.
//
// A server answers pipelined requests in order and reads the GET only after
// it has answered the POST, unless it closes the connection first. What the
// Conn does with the queued poll, by how the post ends:
//
//	post ends with                      server may have           the Conn
//	invalid argument, ctx done, closed  seen nothing              writes nothing, queues nothing
//	write error (salvaged answer too)   not the whole GET         drops: nothing queued
//	2xx, keep-alive                     the GET, or will read it  keeps it queued; Next reads it
//	400, 410, 413, 5xx, keep-alive      the GET, or will read it  keeps it queued; Next reads it
//	any code with Connection: close,    nothing after the answer  drops: forgets it; Next
//	  HTTP/1.0 or a body up to EOF        (RFC 9112 9.6)            redials and sends a fresh GET
//	error or interruption before the    not the GET               drops: nothing queued
//	  answer's first byte                                           (a lazy answer, on an error:
//	                                                                Next first sends the post
//	                                                                again, alone)
//	error or interruption once the      possibly registered it    drops: the next Next reports
//	  answer began (reset, EOF,                                     the poll lost, once; the one
//	  malformed, ctx, stall)                                        after sends a fresh GET
//	a context that fires while idle     registered it             keeps it: the past deadline
//	  (no I/O broken), or while Next                                is cleared, not dropped (a
//	  waits for a lazy answer                                       lazy answer stays unread)
//
// The body of an answer with a poll queued behind it is read through
// whatever its size (it is discarded, not kept), as dropping the connection
// for it would abandon the poll; CutIfStalled cuts it off should it stall.
//
// The trade-off: a connection dropped while a poll is queued may take with it
// a poll the server had already registered, which then stays registered as
// an abandoned /next, and the invocation handed to it is lost: the emulator
// keeps a poll whose client closed its connection, hands it the next
// invoke, and fails that invoke (Runtime.Unknown). An answer whose framing
// is lost leaves no way to read the poll's answer; Next then returns an
// error saying so, so that the caller can log it. Without queueing the
// same failures cost nothing more. That is why an idle-fired
// context does not drop such a connection, why posts should not be
// interrupted except at exit, and why Next does not resend the queued GET:
// a reset or EOF before any byte of its answer does not prove that the
// server never read it (it read the POST in front of it), so Next returns
// the error (ErrTransport) instead of retrying, and the caller decides. A
// Next interrupted or closed while it reads the queued answer abandons that
// poll, as an interrupted Next always does; a call made with a context that
// is already done returns its error and leaves the poll queued.
//
// Lazy answers (with pipelining): Respond and Fail return once written,
// and the next Next reads their answer before the poll's; a refusal or a
// broken answer comes back from that Next as an *AnswerError (which
// unwraps to the error the post would have returned), the rows of the
// table above apply unchanged, and a Next after it reads the poll if it is
// still queued. While the answer waits, SO_RCVLOWAT (Linux) is set one byte
// above the size of the last accepted answer, so that a 202 alone does not
// wake the process; any other answer does, and after a second the mark is
// lowered anyway. A post more than a second after the last /next answer
// began, or on a connection that has answered no poll yet, reads its answer
// at once, as does Stream.
//
// Until its answer is read, the Conn keeps the post (a body up to 4 KiB is
// copied behind its headers; a larger one, and an X-Ray cause, are the
// caller's). The Runtime API takes a post before it answers it, so a
// connection that ends (reset, EOF) before any byte of the answer may have
// taken the post with it: the Next that meets it sends the post once more,
// on a new connection, with no poll behind it, and reads its answer at once;
// then it polls afresh. If the Runtime API had taken the first one, the
// second is refused (400, or 410 once the invocation is over): the
// *AnswerError says so (Resent). A post is sent again once at most. A
// context that fires before the answer's first byte leaves it unread, and
// the poll queued; ReadAnswer reads it when no Next will (at shutdown).
//
// Broken answers: once the first byte of a /next answer has arrived, the
// rest of it (head and body) should arrive within StallTimeout (10 s by
// default); Conn.CutIfStalled, which the caller runs periodically from any
// goroutine (the package starts none), cuts off an answer that has not, and
// Next fails with ErrTransport. The wait for that first byte, the long poll
// itself, is never bounded. When an answer breaks off (reset, EOF, stall, a
// bound exceeded, a malformed header) after its request ID was read, Next
// returns the error with inv.RequestID set and every other field empty: the
// Runtime API handed the invocation out, so the caller should Fail it
// rather than leave its caller to the deadline. An answer without a usable
// request ID can only be skipped (a malformed answer, RequestID empty). Posts have
// no such bound: the Runtime API answers a post only once the caller has
// the body, which a slow caller may legitimately delay.
//
// Extensions (Client.RegisterExtension, Client.AwaitExtensionEvent): Lambda
// sends the runtime SIGTERM before shutdown only when an extension is
// registered. An internal extension that subscribes to no event is enough,
// but registering alone is not: the Runtime API counts init complete only
// once every registered extension has also called GET
// /2020-01-01/extension/event/next, which for such an extension never
// returns (the emulator fails init with Extension.ReadyFailed at the init
// timeout otherwise). So register before the first Next, and keep
// AwaitExtensionEvent running on a goroutine of its own for the life of the
// process (their docs give the contract).
//
// Shut down by closing each Conn; a Client holds no resources of its own.
//
// The package speaks HTTP itself, without net/http, so that one invocation
// (Next + Respond) costs one allocation for its strings and no other.
package rapi
