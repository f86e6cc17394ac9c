// Package rapi is a small HTTP/1.1 client for the Lambda Runtime API. It is
// built for the hot path of a runtime serving many invocations at once.
//
// A Client (New) holds what all connections share: the address, the limits,
// and every request prefix, built once. Client.Conn returns a Conn: one
// keep-alive TCP connection, dialed lazily and redialed on the call after a
// failure. So steady-state Next and Respond never open a connection. Give
// each slot of a runtime its own Conn. Client.InitError uses a connection
// of its own and closes it.
//
// What blocks: Next blocks until the Runtime API hands out an invocation.
// Respond, Fail and Stream block until the Runtime API has accepted the
// answer; in LMI, until the caller received it. With a lazy answer, Respond
// and Fail block only until it is written. Stream also blocks while its
// body's Read does. A done context unblocks the call at once with a past
// deadline on the connection. The connection is then dropped, unless no I/O
// broke and a poll is queued (below). The error wraps ctx.Err(). Close,
// from any goroutine, does the same and ends the Conn.
//
// Ownership: a Conn belongs to one goroutine at a time. Next writes into the
// caller's Invocation and reads the body into inv.Payload[:0]. It grows that
// slice only when it is too small; the caller keeps the slice and may reuse
// it. Respond, Fail and Stream read the caller's body while they run and keep
// no reference to it afterwards. A lazy answer is the exception. Respond and
// Fail may send their slices again, so they keep them until Next or
// ReadAnswer has read the answer. The caller must not change them until then.
// Invocation strings are immutable and may be kept.
//
// Streaming (Conn.Stream): a response read from an io.Reader is posted with
// Lambda-Runtime-Function-Response-Mode: streaming and chunked framing. Each
// Read is one chunk, from a 32 KiB buffer the Conn makes once and reuses. An
// io.WriterTo sends one chunk per Write, from its own bytes. A read error
// after the first byte ends the body with the declared trailers
// Lambda-Runtime-Function-Error-Type and Lambda-Runtime-Function-Error-Body.
// Their document is base64, at most MaxStreamErrorBody bytes: the Runtime
// API reads all trailers into 4 KiB. A read error before the first byte
// becomes an ordinary /error, as nothing was sent. No size limit applies on
// this side: the platform's streaming limits do.
//
// Bounds: the status line and headers are capped at 64 KiB and 100 fields.
// Each chunk-size line, and the trailers, are capped at 64 KiB; the body's
// limit bounds the number of chunks. The /next body is capped at
// MaxRequestBytes, checked before anything is allocated. A larger body gives
// ErrPayloadTooLarge with the Invocation's headers filled, so that the
// invocation can be failed. The body is skipped when under 32 MiB, else the
// connection is dropped. Content-Length is parsed strictly and chunked
// bodies are supported. Connection: close and HTTP/1.0 are honoured.
//
// Errors: non-2xx answers are *StatusError, its Code saying which. A 5xx
// matches ErrRuntimeAPI with errors.Is. Network failures wrap ErrTransport.
// Broken framing is an error of its own: only the sentinels the runtime
// tells apart are exported. A POST is sent again in one case only: with a
// lazy answer, when its connection ends before any byte of its answer
// (below). The caller decides about the others. The other retry is Next's
// own GET /next on a reused connection the server had already closed (no
// byte of answer). The server cannot have registered it, so it is sent once
// more on a new connection. A queued GET is never resent (below).
//
// Pipelining (the queue argument of Respond, Fail and Stream, set by the
// caller per post) answers a race on LMI. A caller gets its response before
// the runtime's next /next is registered, and an invoke that finds no pending
// poll is throttled. With pipelining, Respond and Fail write GET /next right
// behind the POST on the same keep-alive connection. It goes in the same
// write for small posts, as one more writev part for large ones. Stream puts
// it in the write that ends the body. So the Runtime API sees the poll the
// moment it has read the answer. Stream reads its queue right before that
// write, once the body has ended. So a caller that stops polling (a shutdown)
// during a long stream sends no poll after it. The Conn remembers the queued
// poll, and the next Next only reads its answer. A Conn holds at most that
// one poll, after its post. So a runtime with one Conn per slot never holds
// more polls than free slots. While a poll is queued, Respond, Fail and
// Stream refuse with ErrInvalid and write nothing.
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
// The body of an answer with a poll queued behind it is read through and
// discarded, whatever its size. Dropping the connection would abandon the
// poll. CutIfStalled cuts it off should it stall.
//
// The trade-off: a connection dropped while a poll is queued may take with it
// a poll the server had already registered. That poll stays registered as an
// abandoned /next, and the invocation handed to it is lost. The emulator
// keeps a poll whose client closed its connection, hands it the next invoke,
// and fails that invoke (Runtime.Unknown). An answer whose framing is lost
// leaves no way to read the poll's answer. Next then returns an error saying
// so, so that the caller can log it. Without queueing the same failures cost
// nothing more. That is why an idle-fired context does not drop such a
// connection, and why posts should not be interrupted except at exit. It is
// also why Next does not resend the queued GET. A reset or EOF before any
// byte of its answer does not prove that the server never read it. The server
// did read the POST in front of it. So Next returns the error (ErrTransport)
// instead of retrying, and the caller decides. A Next interrupted or closed
// while it reads the queued answer abandons that poll, as an interrupted Next
// always does. A call made with a context already done returns its error and
// leaves the poll queued.
//
// Lazy answers (with pipelining): Respond and Fail return once written, and
// the next Next reads their answer before the poll's. A refusal or a broken
// answer comes back from that Next as an *AnswerError. It unwraps to the
// error the post would have returned. The rows of the table above apply
// unchanged, and a Next after it reads the poll if it is still queued. While
// the answer waits, SO_RCVLOWAT (Linux) is set one byte above the size of the
// last accepted answer. So a 202 alone does not wake the process; any other
// answer does. After a second the mark is lowered anyway. A post more than a
// second after the last /next answer began reads its answer at once. So does
// a post on a connection that has answered no poll yet, and Stream.
//
// Until its answer is read, the Conn keeps the post. A body up to 4 KiB is
// copied behind its headers; a larger one, and an X-Ray cause, stay the
// caller's. The Runtime API takes a post before it answers it. So a
// connection that ends (reset, EOF) before any byte of the answer may have
// taken the post with it. The Next that meets it sends the post once more,
// alone, on a new connection, and reads its answer at once. Then it polls
// afresh. If the Runtime API had taken the first one, the second is
// refused: 400, or 410 once the invocation is over. The *AnswerError says
// so (Resent). A post is sent again once at most. A context that fires
// before the answer's first byte leaves it unread, and the poll queued.
// ReadAnswer reads it when no Next will (at shutdown).
//
// Broken answers: once the first byte of a /next answer has arrived, its head
// and body should arrive within StallTimeout (10 s by default). The caller
// runs Conn.CutIfStalled periodically, from any goroutine; the package starts
// none. It cuts off an answer still incomplete by then, and Next fails with
// ErrTransport. The wait for that first byte, the long poll itself, is never
// bounded. An answer may break off (reset, EOF, stall, a bound exceeded, a
// malformed header) after its request ID was read. Next then returns the
// error with inv.RequestID set and every other field empty. The Runtime API
// handed the invocation out, so the caller should Fail it rather than leave
// its caller to the deadline. An answer without a usable request ID can only
// be skipped (a malformed answer, RequestID empty). Posts have no such bound
// by time. The Runtime API answers a post only once the caller has the
// body, which a slow caller may legitimately delay. The caller bounds them
// instead: Conn.CutReply cuts the wait for a reply whose head has not come
// whole, the call fails with ErrNoReply, and a post whose reply had not
// begun is sent again once. The body of a reply, once its head is read, is
// under CutIfStalled as any answer begun.
//
// Extensions (Client.RegisterExtension, Client.AwaitExtensionEvent): Lambda
// sends the runtime SIGTERM before shutdown only when an extension is
// registered. An internal extension that subscribes to no event is enough,
// but registering alone is not. The Runtime API counts init complete only
// once every registered extension has also called GET
// /2020-01-01/extension/event/next. Without that call, the emulator fails
// init with Extension.ReadyFailed at the init timeout. For such an
// extension the call never returns. So register before the first Next.
// Keep AwaitExtensionEvent running on a goroutine of its own for the life
// of the process (their docs give the contract).
//
// Shut down by closing each Conn; a Client holds no resources of its own.
//
// The package speaks HTTP itself, without net/http. So one invocation (Next +
// Respond) costs one allocation for its strings and no other.
package rapi
