package rapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The exchange of a Conn, in the order an invocation makes its calls:
// Connect; Next, which first reads the answer a post left to it
// (readPending, readLeft); Respond and Fail, posted with a poll queued
// behind them when asked (post, leaveAnswer); Stream (streamTo,
// endStream); ReadAnswer at shutdown; the cuts; Close. Each public call
// has the pipeline's steps beside it. What they call is below, and never
// calls back up: reading the answers (httpread.go), the socket
// (socket.go), writing the requests (httpwrite.go, stream.go,
// streamto.go), the framing (head.go, nextheaders.go, body.go).
// files_test.go holds the package to it.

// Operation names, as in StatusError.Op and error messages.
const (
	opNext      = "next"
	opResponse  = "response"
	opError     = "error"
	opInitError = "init/error"
	opConnect   = "connect"
)

const (
	// coalesceMax: header and body up to this size are copied into one
	// buffer, for one write. Larger ones go out with writev.
	coalesceMax = 4 << 10
	// initialHead is the request scratch a Conn starts with: enough for the
	// head and a tiny body. It grows to coalesceMax only for slots that post
	// larger answers. So 1600 idle slots keep 4.8 MiB less;
	// defaultReadBufferSize tells how both were measured.
	initialHead = 1 << 10
	// maxDiscardPayload: an oversized or unanswerable /next body up to this
	// size is read and thrown away to keep the connection. Beyond it the
	// connection is dropped instead.
	maxDiscardPayload = 32 << 20
	// maxDiscardSmall: the same for bodies of other responses.
	maxDiscardSmall = 64 << 10
	// salvageWait bounds the wait for an early answer after a failed write.
	salvageWait = 100 * time.Millisecond
)

// aLongTimeAgo is a deadline that makes blocked I/O return at once.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is one keep-alive connection to the Runtime API. Its methods are not
// safe for concurrent use (one owner at a time). The exception is Close:
// any goroutine may call it to unblock and end the Conn.
//
// A Conn stays registered with the Done channel of the last context it was
// given until it gets another one or is closed. Reusing one long-lived
// context costs no allocation per call; a new context per call costs a few.
type Conn struct {
	c     *Client
	br    *bufio.Reader
	req   request
	bufs  net.Buffers
	parts [5][]byte
	spill []byte
	sbuf  []byte // Stream's chunk buffer, made on the first Stream and kept
	sw    streamWriter
	body  body
	hdrs  nextHeaders
	in    intern

	// pipe is the pipelining of polls behind answers (pipeline.go),
	// owner-only.
	pipe pipeline

	// mu guards nc against interrupt and Close. The owner writes nc only
	// under mu, so it may read it without.
	mu          sync.Mutex
	nc          net.Conn
	gen         uint64 // bumped when the watched context changes
	watchDone   <-chan struct{}
	watchStop   func() bool
	interrupted atomic.Bool // a context fired: nc has a past deadline
	dormant     atomic.Bool // the current call's context cannot be done: the registration waits
	closed      atomic.Bool
	answerSince time.Time // under mu: first byte of the /next answer being read, else zero
	// replyPost is when the post whose reply is being read went out,
	// zero when none is: until the reply's head is read (CutReply).
	// replyCut: CutReply cut that wait.
	replyPost time.Time
	replyCut  bool
}

func newConn(c *Client) *Conn {
	return &Conn{
		c:    c,
		br:   bufio.NewReaderSize(nil, c.opts.ReadBufferSize),
		req:  request{head: make([]byte, 0, initialHead)},
		pipe: newPipeline(),
	}
}

// Connect opens the connection now if there is none, so that one goroutine
// can open many. A dial needs a deep stack, and a goroutine keeps the stack
// it grew. An error is the dial's; the next call dials again.
func (c *Conn) Connect(ctx context.Context) error { return c.begin(ctx, opConnect) }

// Next long-polls GET /runtime/invocation/next and fills inv. It blocks until
// an invocation arrives, ctx is done, or Close is called. Do not abandon a
// poll you still want: the Runtime API keeps it registered.
//
// When a GET /next is queued behind the last post (queue), Next writes
// nothing and reads that poll's answer. It never sends the GET again on a new
// connection when the queued one fails (see the package doc). If the post
// left its answer, Next reads it first. It resends the post if its connection
// ended before that answer began. Next returns an *AnswerError (inv empty)
// when that answer is not a success. An answer to that post that broke once
// begun took the connection and the poll with it, possibly still registered.
// Next then returns an error saying so, once, writing nothing, and the Next
// after it polls afresh.
//
// An answer that breaks off after its request ID leaves only inv.RequestID
// set, with the error, so that the invocation can be failed. CutIfStalled
// cuts off an answer that stalls midway. A whole answer with no request ID
// that a URL can carry leaves only inv.Deadline set (when valid). The
// invocation was handed out, and cannot be answered.
func (c *Conn) Next(ctx context.Context, inv *Invocation) error {
	if inv == nil {
		return errNilInvocation()
	}
	// A slot waits here for its next invocation, most of its life. The
	// frame stays small: what else Next needs is in callees that have
	// returned by then. So Go can shrink a parked slot's stack after a
	// burst grew it (concurrent's TestParkedSlotStack).
	inv.reset()
	err := c.pipe.lost
	c.pipe.lost = nil
	for retried := false; err == nil; retried = true {
		// reused: the poll goes out on a connection that served before.
		reused := c.nc != nil && !c.interrupted.Load()
		if err = c.begin(ctx, opNext); err != nil {
			break
		}
		if reused, err = c.readPending(ctx, reused); err != nil {
			break
		}
		// From here every path reads the queued answer or drops nc.
		queued := c.pipe.queued
		c.pipe.queued = false
		if !queued {
			_, err = c.nc.Write(c.c.pre.next)
		}
		if err == nil {
			_, err = c.br.Peek(1) // the long poll: wait for the first byte
		}
		if err == nil {
			err = c.readNext(ctx, inv)
			break
		}
		err = c.nextFailed(ctx, err, queued || retried || !reused)
	}
	c.trim()
	return err
}

//go:noinline
func errNilInvocation() error {
	return fmt.Errorf("rapi: %s: %w: nil Invocation", opNext, ErrInvalid)
}

// readPending reads the answer that the last post left to this poll, on the
// connection begin readied. reused is begin's. It is false when that answer
// ended the connection, taking the queued poll with it. The poll then goes
// out afresh on a new one.
//
//go:noinline
func (c *Conn) readPending(ctx context.Context, reused bool) (bool, error) {
	if c.pipe.pending == "" {
		return reused, nil
	}
	if err := c.readLeft(ctx); err != nil {
		return false, err
	}
	if err := c.pipe.lost; err != nil { // a success whose body broke
		c.pipe.lost = nil
		return false, err
	}
	if c.nc == nil {
		return false, c.begin(ctx, opNext)
	}
	return reused, nil
}

// readLeft reads the answer that a post left to this Next (or ReadAnswer). A
// context that fires before its first byte broke nothing: the answer stays
// pending, and the poll queued. A connection that ends before it (reset, EOF,
// CutReply) may have ended before the server took the post. So the post,
// kept in req, is sent once more on a new connection, its answer read at
// once. If the first one was taken, the second is refused (400, or 410). A
// cut is reported whatever became of the second (see AnswerError).
func (c *Conn) readLeft(ctx context.Context) error {
	op := c.pipe.pending
	c.pipe.pending = ""
	c.awaitReply(c.pipe.posted)
	_, err := c.peekWithin(lazyWake)
	c.setLowat(0)
	if err != nil {
		cut := c.endReply()
		if !cut && c.interrupted.Load() && !c.closed.Load() && ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			c.pipe.pending = op
			return fmt.Errorf("rapi: %s: %w", op, ctx.Err())
		}
		if cut {
			err = ErrNoReply
		}
		err = c.fail(ctx, op, err)
		if !errors.Is(err, ErrTransport) {
			return &AnswerError{Op: op, Err: err}
		}
		again := c.post(ctx, op, &c.req, false)
		switch {
		case cut && again != nil:
			return &AnswerError{Op: op, Err: fmt.Errorf("%w; sent again: %w", err, again), Resent: true}
		case cut:
			return &AnswerError{Op: op, Err: fmt.Errorf("%w; sent again: accepted", err), Resent: true}
		case again != nil:
			return &AnswerError{Op: op, Err: again, Resent: true}
		}
		return nil
	}
	n := c.br.Buffered()
	if err := c.readReply(ctx, op, nil, nil); err != nil {
		if c.pipe.lost != nil { // reported here, with the answer's error
			c.pipe.lost = nil
			err = fmt.Errorf("%w; %w", err, errLostPoll)
		}
		return &AnswerError{Op: op, Err: err}
	}
	if c.nc != nil {
		c.pipe.lowat = min(n-c.br.Buffered()+1, maxLowat)
	}
	return nil
}

// nextFailed handles err, met before any byte of the poll's answer. It
// returns nil when the poll may go out again on a fresh connection, else the
// error Next returns. A queued GET went out behind a post the server was
// reading. The server may have registered it before the connection ended, so
// it is not sent again (final): the caller decides, with the error.
//
//go:noinline
func (c *Conn) nextFailed(ctx context.Context, err error, final bool) error {
	if final || !c.staleConn(ctx, err) {
		return c.fail(ctx, opNext, err)
	}
	c.drop()
	return nil
}

// Respond posts body as the response of inv, addressed by inv.RequestID. When
// inv.InvocationID is set, it goes back as Lambda-Runtime-Invocation-Id. The
// Runtime API refuses an answer whose echo does not match, which guards
// against answering the wrong invocation. Only those two fields are read.
// body is only read, and not retained after Respond returns. The exception is
// an answer pipelining leaves to Next. body may be sent again, so it is kept
// until Next (or ReadAnswer) has read that answer. An empty contentType sends
// no Content-Type (the Runtime API then assumes application/octet-stream).
// With queue set, GET /next goes out right behind the post, in the same
// write. The answer is left to the Next that reads that poll (see the package
// doc). Set queue when the next call is Next.
func (c *Conn) Respond(ctx context.Context, inv *Invocation, body []byte, contentType string, queue bool) error {
	if err := c.idle(opResponse); err != nil {
		return err
	}
	if err := buildResponse(&c.req, c.c.pre, inv, contentType, body); err != nil {
		return fmt.Errorf("rapi: %s: %w", opResponse, err)
	}
	return c.post(ctx, opResponse, &c.req, queue)
}

// Fail posts body (the JSON error document) as the error of inv, addressed
// and echoed as by Respond. errorType goes as
// Lambda-Runtime-Function-Error-Type, omitted when empty. xrayCause, when
// non-empty, under 1 MiB and free of control bytes, goes as
// Lambda-Runtime-Function-XRay-Error-Cause. Otherwise it is left out rather
// than failing the report. body and xrayCause are kept as
// Respond keeps its body, and queue is Respond's.
func (c *Conn) Fail(ctx context.Context, inv *Invocation, errorType string, body, xrayCause []byte, queue bool) error {
	if err := c.idle(opError); err != nil {
		return err
	}
	if err := buildError(&c.req, c.c.pre, inv, errorType, body, xrayCause); err != nil {
		return fmt.Errorf("rapi: %s: %w", opError, err)
	}
	return c.post(ctx, opError, &c.req, queue)
}

// idle refuses an answer while a poll is queued, before anything is built.
// Its reply would come only after that poll's invocation. And req may still
// hold the post in front of that poll (readLeft).
func (c *Conn) idle(op string) error {
	if c.pipe.queued && !c.closed.Load() {
		return fmt.Errorf("rapi: %s: %w: a /next is queued on this Conn: call Next first", op, ErrInvalid)
	}
	return nil
}

// post sends r, with GET /next right behind it when queue is set, and reads
// the response to r, which has a small body.
func (c *Conn) post(ctx context.Context, op string, r *request, queue bool) error {
	defer c.trim()
	if err := c.begin(ctx, op); err != nil {
		return err
	}
	if err := c.idle(op); err != nil {
		return err
	}
	if err := c.write(r, queue); err != nil {
		// A write that failed did not get the whole GET out (it is last). So
		// the server cannot have registered it.
		return c.salvage(ctx, op, err)
	}
	// Whatever ends the connection from here (error, Connection: close,
	// interruption) goes through drop, which forgets the poll.
	posted := time.Now()
	c.pipe.queued = queue
	if queue && len(r.body) <= lazyMaxBody && c.leaveAnswer(op, posted) {
		return nil
	}
	return c.answer(ctx, op, nil, posted)
}

// leaveAnswer reports whether the answer to the post just written at
// posted (with a poll queued behind it) is left to Next, and prepares for
// it.
func (c *Conn) leaveAnswer(op string, posted time.Time) bool {
	if !c.pipe.lazy || posted.Sub(c.pipe.polled) > c.pipe.fresh {
		return false
	}
	c.pipe.pending, c.pipe.posted = op, posted
	c.setLowat(c.pipe.lowat)
	return true
}

// Stream posts the response of inv (addressed and echoed as by Respond) in
// streaming mode: Lambda-Runtime-Function-Response-Mode: streaming,
// Transfer-Encoding: chunked, and a Trailer header declaring
// Lambda-Runtime-Function-Error-Type and Lambda-Runtime-Function-Error-Body.
// It reads body until io.EOF. Each Read that returns data (at most 32 KiB)
// becomes one chunk, written at once. So the reader decides how the response
// is cut and flushed. The chunk buffer belongs to the Conn and is reused: a
// stream allocates nothing per chunk. A body that is an io.WriterTo writes
// itself out instead. Each Write it makes is one chunk, sent from its own
// bytes (writev). So a *bytes.Reader or *bytes.Buffer is not copied at all.
// WriteTo is given the Conn's writer, which writes on its connection. body
// must not use it once WriteTo returns. A caller that cannot vouch for body
// hands it a writer that refuses late writes. body is not retained after
// Stream returns. An empty contentType sends no Content-Type
// (application/octet-stream).
//
// A read error (any error but io.EOF) ends the stream. Before the first byte,
// nothing has been written. So Stream posts an ordinary /error instead, and
// the caller gets a plain function error. After it, the body ends with the
// declared trailers. They carry the error type and the base64 of the error
// document, both from onError (see ErrorFunc). Either way Stream returns nil
// when the Runtime API accepted the answer. The caller learns of the read
// error through onError. Nothing is sent before the first Read returns, so a
// reader that blocks holds no request open.
//
// Errors are those of Respond. queue is read once body has ended, right
// before the end is written; the caller may set it from body's last Read.
// When it is set, GET /next goes out in the same write, right behind the
// last chunk (or the trailers, or the /error), as with Respond. A nil queue
// queues nothing. While a poll is queued Stream refuses with
// ErrInvalid and reads nothing. A panic or runtime.Goexit in body's Read
// after the first byte goes on up the stack. It drops the connection, which
// the Runtime API reports as a truncated response.
func (c *Conn) Stream(ctx context.Context, inv *Invocation, contentType string, body io.Reader, onError ErrorFunc, queue *bool) error {
	defer c.trim()
	if body == nil || onError == nil {
		return fmt.Errorf("rapi: %s: %w: nil body or ErrorFunc", opResponse, ErrInvalid)
	}
	if err := c.idle(opResponse); err != nil {
		return err
	}
	if err := buildStreamHead(&c.req, c.c.pre, inv, contentType); err != nil {
		return fmt.Errorf("rapi: %s: %w", opResponse, err)
	}
	if err := c.begin(ctx, opResponse); err != nil {
		return err
	}
	if c.sbuf == nil {
		c.sbuf = make([]byte, chunkPrefix+streamChunk+2)
	}
	return c.streamTo(ctx, inv, body, onError, queue)
}

// streamTo streams body through c.sw. A body that is an io.WriterTo
// (*bytes.Reader, *bytes.Buffer, *bufio.Reader, ...) writes itself out. Any
// other is read into the chunk buffer, one chunk per Read (ReadFrom). An
// error before the first byte is an ordinary /error; one after it goes in
// the trailers. A panic or Goexit after the first byte drops the
// connection.
func (c *Conn) streamTo(ctx context.Context, inv *Invocation, body io.Reader, onError ErrorFunc, queue *bool) error {
	w := &c.sw
	*w = streamWriter{c: c, head: true}
	finished := false
	defer func() {
		if !finished && !w.head { // the request is cut
			c.drop()
		}
	}()
	var rerr error
	if wt, ok := body.(io.WriterTo); ok {
		_, rerr = wt.WriteTo(w)
		if errors.Is(rerr, io.EOF) {
			rerr = nil
		}
	} else {
		_, rerr = w.ReadFrom(body)
	}
	finished = true
	q := queue != nil && *queue
	if w.err != nil {
		return c.salvage(ctx, opResponse, w.err)
	}
	if w.head && rerr != nil {
		errorType, doc := onError(rerr, 0)
		return c.Fail(ctx, inv, streamErrorType(errorType), doc, nil, q)
	}
	return c.endStream(ctx, w.head, w.sent, rerr, onError, q)
}

// endStream writes the end of a streamed body in one write. That is the last
// chunk, with trailers unless rerr is nil, then the queued GET. It goes
// behind the head when nothing was sent (headPending).
func (c *Conn) endStream(ctx context.Context, headPending bool, sent int64, rerr error, onError ErrorFunc, queue bool) error {
	end := c.req.head[:0]
	if headPending {
		end = c.req.head
	}
	if rerr == nil {
		end = append(end, lastChunk...)
	} else {
		errorType, doc := onError(rerr, sent)
		end = appendErrorTrailers(end, errorType, doc)
	}
	if queue {
		end = append(end, c.c.pre.next...)
	}
	c.req.head = end
	if _, err := c.nc.Write(end); err != nil {
		return c.salvage(ctx, opResponse, err)
	}
	c.pipe.queued = queue
	return c.answer(ctx, opResponse, nil, time.Now())
}

// ReadAnswer reads the answer to the last post when pipelining left it to
// Next. It returns what Next would have returned for it: nil, or an
// *AnswerError. A poll queued behind the post stays queued. With no answer
// left unread it returns nil at once. It is for a caller that will not call
// Next again, at shutdown. Close alone would drop an answer that the Runtime
// API may have accepted unread.
func (c *Conn) ReadAnswer(ctx context.Context) error {
	if c.pipe.pending == "" {
		return nil
	}
	defer c.trim()
	if err := c.begin(ctx, c.pipe.pending); err != nil {
		return err
	}
	return c.readLeft(ctx)
}

// Queued reports whether a GET /next went out behind the last post and
// its answer is still to be read by Next.
func (c *Conn) Queued() bool { return c.pipe.queued }

// CutIfStalled interrupts the /next answer being read when its first byte
// arrived more than Options.StallTimeout ago. The blocked read returns, and
// Next fails with ErrTransport (and inv.RequestID, if it had been read). It
// reports whether it cut. The wait for the first byte, the long poll itself,
// is never cut. Nor is the wait for a post's reply: the Runtime API answers
// a post only once the caller has the body, which a slow caller may
// legitimately delay (CutReply). The body of a post's reply is cut alike,
// from its head, when it was not in whole with it.
//
// Call it periodically (every StallTimeout/4, say) from any goroutine. A
// runtime with one Conn per slot calls it for each. It costs a lock.
func (c *Conn) CutIfStalled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answerSince.IsZero() || c.nc == nil || time.Since(c.answerSince) < c.c.opts.StallTimeout {
		return false
	}
	c.interrupted.Store(true) // as a context would: the Conn drops nc
	_ = c.nc.SetDeadline(aLongTimeAgo)
	return true
}

// CutReply interrupts the wait for the reply to a post that went out
// before postedBefore, until the reply's head is read in full. The blocked
// read returns, and the call waiting fails with an error wrapping
// ErrTransport and ErrNoReply, even if the head came just then. A post left
// to Next is sent again once, alone, as after any transport error, and its
// reply is under CutReply alike. Next then returns an *AnswerError, even
// when the post sent again was accepted. A later post is never cut: a
// caller that looked at its clock, then cuts, cuts no answer made
// meanwhile. It reports whether it cut. Posts are never cut by time here:
// the caller knows how long a reply may take. concurrent cuts one still
// missing past the invocation's deadline and its grace, and StallTimeout
// after its post. Any goroutine may call it.
func (c *Conn) CutReply(postedBefore time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.replyPost.IsZero() || !c.replyPost.Before(postedBefore) || c.replyCut || c.nc == nil {
		return false
	}
	c.replyCut = true
	c.interrupted.Store(true) // as a context would: the Conn drops nc
	_ = c.nc.SetDeadline(aLongTimeAgo)
	return true
}

// Close closes the connection and ends the Conn. A blocked call returns an
// error saying the connection is closed, and later calls fail the same
// way. Close is idempotent and may be called from any goroutine.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return nil
	}
	c.closed.Store(true)
	c.gen++
	stop := c.watchStop
	c.watchStop = nil
	var err error
	if c.nc != nil {
		// nc itself stays set: the owner may be using it right now.
		err = c.nc.Close()
	}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	return err
}
