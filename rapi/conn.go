package rapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

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
	// buffer and written with one write; larger ones go out with writev.
	coalesceMax = 4 << 10
	// initialHead is the request scratch a Conn starts with: enough for the
	// head and a tiny body; it grows to coalesceMax only for the slots that
	// post larger answers (1600 idle slots keep 4.8 MiB less; see
	// defaultReadBufferSize for the measurement of both).
	initialHead = 1 << 10
	// maxDiscardPayload: an oversized or unanswerable /next body up to this
	// size is read and thrown away to keep the connection; beyond it the
	// connection is dropped instead.
	maxDiscardPayload = 32 << 20
	// maxDiscardSmall: the same for bodies of other responses.
	maxDiscardSmall = 64 << 10
	// salvageWait bounds the wait for an early answer after a failed write.
	salvageWait = 100 * time.Millisecond
)

// errLostPoll ends the error that Next returns, once, when a connection
// holding a queued poll was dropped after the answer to the post in front
// of it had begun (see lose).
var errLostPoll = errors.New("the poll queued behind it was lost with its connection " +
	"(the Runtime API may still hand it an invocation, which then fails)")

// aLongTimeAgo is a deadline that makes blocked I/O return at once.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is one keep-alive connection to the Runtime API. Its methods are not
// safe for concurrent use (one owner at a time), except Close, which may be
// called from any goroutine to unblock and end the Conn.
//
// A Conn stays registered with the Done channel of the last context it was
// given until it gets another one or is closed: reusing one long-lived
// context costs no allocation per call, a new context per call costs a few.
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
// can open many: a dial needs a deep stack, and a goroutine keeps the
// stack it grew. An error is the dial's; the next call dials again.
func (c *Conn) Connect(ctx context.Context) error { return c.begin(ctx, opConnect) }

// Next long-polls GET /runtime/invocation/next and fills inv. It blocks until
// an invocation arrives, ctx is done, or Close is called. Do not abandon a
// poll you still want: the Runtime API keeps it registered.
//
// When a GET /next is queued behind the last post (queue), Next
// writes nothing: it reads that poll's answer, and never sends the GET
// again on a new connection when the queued one fails (see the package
// doc). It first reads the answer to that post if the post left it (sending
// the post again if its connection ended before that answer began), and
// returns an *AnswerError (inv empty) when that is not a success. When the answer to
// that post broke once begun, the connection went and the poll with it,
// possibly still registered: Next returns an error saying so, once, writing
// nothing, and the Next after it polls afresh.
//
// An answer that breaks off after its request ID leaves inv.RequestID set
// (and nothing else) with the error, so that the invocation can be failed;
// an answer that stalls midway is cut off by CutIfStalled.
func (c *Conn) Next(ctx context.Context, inv *Invocation) error {
	if inv == nil {
		return errNilInvocation()
	}
	// A slot waits for its next invocation here, most of its life: the
	// frame stays small (what else Next needs is in callees that have
	// returned by then), so that a parked slot's stack stays small enough
	// for Go to shrink it after a burst grew it (concurrent's
	// TestParkedSlotStack).
	inv.reset()
	err := c.pipe.lost
	c.pipe.lost = nil
	for retried := false; err == nil; retried = true {
		var reused bool
		if reused, err = c.beginNext(ctx); err != nil {
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

// beginNext readies the connection for the poll: dialed, and the answer to
// the last post read. reused reports whether the poll goes out on a
// connection that served before.
//
//go:noinline
func (c *Conn) beginNext(ctx context.Context) (reused bool, err error) {
	reused = c.nc != nil && !c.interrupted.Load()
	if err := c.begin(ctx, opNext); err != nil {
		return false, err
	}
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
	// An answer that ended the connection took the queued poll with it,
	// unread by the server: poll afresh on a new one.
	if c.nc == nil {
		if err := c.begin(ctx, opNext); err != nil {
			return false, err
		}
		return false, nil
	}
	return reused, nil
}

// nextFailed handles err, met before any byte of the poll's answer: nil
// when the poll may go out again on a fresh connection, else the error
// Next returns. A queued GET went out behind a post that the server was
// reading: it may have registered it before the connection ended, so it is
// not sent again (final; the caller decides, with the error).
//
//go:noinline
func (c *Conn) nextFailed(ctx context.Context, err error, final bool) error {
	if final || !c.staleConn(ctx, err) {
		return c.fail(ctx, opNext, err)
	}
	c.drop()
	return nil
}

// readNext reads the invocation whose answer has begun.
//
//go:noinline
func (c *Conn) readNext(ctx context.Context, inv *Invocation) error {
	// The answer has begun: the rest of it must not stall (see CutIfStalled).
	c.beginAnswer()
	defer c.endAnswer()
	c.hdrs.start(inv, &c.in)
	h, err := readHead(c.br, &c.spill, &defaultLimits, &c.hdrs)
	if err != nil {
		c.resetKeepingID(inv)
		return c.fail(ctx, opNext, err)
	}
	c.body.init(c.br, &c.spill, h, &defaultLimits)
	if h.code/100 != 2 {
		inv.reset()
		return c.status(opNext, h)
	}
	if err := c.hdrs.finish(); err != nil {
		inv.reset() // nothing that can be answered
		return c.skip(opNext, h, maxDiscardPayload, fmt.Errorf("rapi: %s: %w", opNext, err))
	}
	p, err := c.body.readAll(inv.Payload, c.c.opts.MaxRequestBytes)
	switch {
	case errors.Is(err, errBodyTooLarge):
		inv.Payload = p[:0]
		return c.skip(opNext, h, maxDiscardPayload, fmt.Errorf("rapi: %s: %w: request %s: body over %d bytes",
			opNext, ErrPayloadTooLarge, inv.RequestID, c.c.opts.MaxRequestBytes))
	case err != nil:
		c.resetKeepingID(inv)
		return c.fail(ctx, opNext, err)
	}
	inv.Payload = p
	c.end(h)
	return nil
}

// staleConn reports whether err, met before any byte of a response on a
// reused connection, means the server had closed it while idle. Only GET
// /next is then sent again: the server cannot have seen it, and a POST is
// never sent twice.
func (c *Conn) staleConn(ctx context.Context, err error) bool {
	if c.closed.Load() || ctx.Err() != nil {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// What Next does with an answer that breaks off. A peer that stops
// mid-answer is cut off by CutIfStalled, and the request ID of an answer
// that failed after it was read is kept, so that the caller can report that
// invocation with Fail instead of leaving it to its deadline.
//
// Stalls are watched from outside rather than with a read deadline: setting
// and clearing a deadline around every answer adds a timer, and a wake-up
// of the network poller, to every invocation (about 4 µs of a 11 µs
// Next+Respond in BenchmarkNextRespond). Recording when the answer began
// costs a clock read and a lock.

// beginAnswer records that the first byte of an answer has arrived.
func (c *Conn) beginAnswer() {
	now := time.Now()
	c.pipe.polled = now
	c.watchAnswer(now)
}

// watchAnswer puts the answer being read, begun at since, under
// CutIfStalled's watch until endAnswer.
func (c *Conn) watchAnswer(since time.Time) {
	c.mu.Lock()
	c.answerSince = since
	c.mu.Unlock()
}

// endAnswer records that the answer has been read, or has failed. Under
// the lock, so that CutIfStalled never cuts a connection once it returned.
func (c *Conn) endAnswer() {
	c.mu.Lock()
	c.answerSince = time.Time{}
	c.mu.Unlock()
}

// CutIfStalled interrupts the /next answer being read when its first byte
// arrived more than Options.StallTimeout ago: the blocked read returns, and
// Next fails with ErrTransport (and inv.RequestID, if it had been read). It
// reports whether it cut. The wait for the first byte, the long poll itself,
// is never cut, and neither are posts: the Runtime API answers a post only
// once the caller has the body, which a slow caller may legitimately delay.
// The one exception is the body of a post's answer past the discard cap,
// read through to keep the poll queued behind it (Conn.discarded).
//
// Call it periodically (every StallTimeout/4, say) from any goroutine; a
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

// resetKeepingID empties inv after an answer failed, keeping its request
// ID when one had been read and is safe to post to (the invocation was
// handed out, and only the runtime can still end it before its deadline),
// and its invocation ID if read too, so that the error answer echoes it.
func (c *Conn) resetKeepingID(inv *Invocation) {
	id, invID := inv.RequestID, inv.InvocationID
	if id == "" {
		id, invID = c.hdrs.requestID(), c.hdrs.gathered(fInvocationID)
	}
	inv.reset()
	inv.RequestID = id
	if id != "" {
		inv.InvocationID = invID
	}
}

// Respond posts body as the response of inv, addressed by inv.RequestID
// and carrying inv.InvocationID back as Lambda-Runtime-Invocation-Id when
// it is set (the Runtime API refuses an answer whose echo does not match,
// which guards against answering the wrong invocation). Only those two
// fields are read. body is only read, and not retained after Respond
// returns, unless pipelining leaves its answer to Next: then until Next (or
// ReadAnswer) has read it, as it may be sent again. An empty contentType
// sends no Content-Type (the Runtime API then assumes
// application/octet-stream). With queue set, GET /next goes out right
// behind the post, in the same write, and the answer is left to the Next
// that reads that poll (see the package doc): set it when the next call
// is Next.
func (c *Conn) Respond(ctx context.Context, inv *Invocation, body []byte, contentType string, queue bool) error {
	if err := c.idle(opResponse); err != nil {
		return err
	}
	if err := buildResponse(&c.req, c.c.pre, inv, contentType, body); err != nil {
		return fmt.Errorf("rapi: %s: %w", opResponse, err)
	}
	return c.post(ctx, opResponse, &c.req, queue)
}

// Fail posts body (the JSON error document) as the error of inv (addressed
// and echoed as by Respond), with errorType as Lambda-Runtime-Function-Error-Type (omitted
// when empty). xrayCause, when non-empty, under 1 MiB and free of control
// bytes, goes as Lambda-Runtime-Function-XRay-Error-Cause; otherwise it is
// left out rather than failing the report. body and xrayCause are kept as
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

// Close closes the connection and ends the Conn: a blocked call returns an
// error saying the connection is closed, and later calls fail the same way. Close is
// idempotent and may be called from any goroutine.
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
		// A write that failed did not get the whole GET out (it is last):
		// the server cannot have registered it.
		return c.salvage(ctx, op, err)
	}
	// Whatever ends the connection from here (error, Connection: close,
	// interruption) goes through drop, which forgets the poll.
	c.pipe.queued = queue
	if queue && len(r.body) <= lazyMaxBody && c.leaveAnswer(op) {
		return nil
	}
	return c.answer(ctx, op, nil)
}

// answer reads the Runtime API's answer to a request written in full
// (sink, if any, sees its headers). A 2xx means the request succeeded,
// whatever happens to the rest of the body.
func (c *Conn) answer(ctx context.Context, op string, sink headerSink) error {
	// Nothing of the answer yet: the server has not answered the post, so
	// it has not read a poll queued behind it either.
	if _, err := c.br.Peek(1); err != nil {
		return c.fail(ctx, op, err)
	}
	h, err := readHead(c.br, &c.spill, &defaultLimits, sink)
	if err != nil {
		return c.lose(ctx, op, err)
	}
	c.body.init(c.br, &c.spill, h, &defaultLimits)
	if h.code/100 != 2 {
		return c.status(op, h)
	}
	return c.skip(op, h, maxDiscardSmall, nil)
}

// trim drops references to the caller's slices and scratch buffers that a
// rare large response grew, so that what a Conn keeps stays small. A post
// whose answer is pending stays in req until it is read (readLeft).
func (c *Conn) trim() {
	if cap(c.spill) > maxSpillKept {
		c.spill = nil
	}
	if c.pipe.pending != "" {
		return
	}
	c.req.body, c.req.mid = nil, nil
	if cap(c.req.head) > 4*coalesceMax {
		c.req.head = make([]byte, 0, coalesceMax)
	}
}

// write sends r, followed by GET /next when next is set, with one write
// when small, else with writev (net.Buffers), without copying the body.
// r is left as a request that writes the same bytes again, without the GET.
func (c *Conn) write(r *request, next bool) error {
	var tail []byte
	if next {
		tail = c.c.pre.next
	}
	if r.mid == nil && len(r.head)+len(r.body)+len(tail) <= coalesceMax {
		r.head = append(r.head, r.body...)
		n := len(r.head)
		r.head = append(r.head, tail...)
		_, err := c.nc.Write(r.head)
		r.head, r.body = r.head[:n], nil // the body is in head now
		return err
	}
	c.bufs = append(c.parts[:0], r.head[:r.split], r.mid, r.head[r.split:], r.body)
	if next {
		c.bufs = append(c.bufs, tail) // parts has room: no allocation
	}
	_, err := c.bufs.WriteTo(c.nc)
	c.parts = [5][]byte{}
	return err
}

// begin makes sure the context is watched and a connection is up.
func (c *Conn) begin(ctx context.Context, op string) error {
	if c.closed.Load() {
		c.pipe.queued = false // the connection is gone
		return fmt.Errorf("rapi: %s: %w", op, errClosed)
	}
	c.watch(ctx)
	if c.interrupted.Load() {
		if c.pipe.queued {
			c.rearm()
		} else {
			c.drop() // its deadline is in the past
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("rapi: %s: %w", op, err)
	}
	if c.nc != nil {
		return nil
	}
	nc, err := c.c.dial(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("rapi: %s: %w", op, ctx.Err())
		}
		return fmt.Errorf("rapi: %s: %w: %w", op, ErrTransport, err)
	}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		nc.Close()
		return fmt.Errorf("rapi: %s: %w", op, errClosed)
	}
	c.nc = nc
	fired := c.interrupted.Load() // the context fired before nc was visible to it
	c.mu.Unlock()
	c.br.Reset(nc)
	if fired {
		return c.fail(ctx, op, context.Canceled)
	}
	return nil
}

// watch arranges for ctx to interrupt blocked I/O. The registration is kept
// across calls with the same Done channel, so a long-lived context costs
// nothing per call; changing contexts costs one registration. A context
// that can never be done (Done is nil) leaves the registration in place,
// dormant, rather than dropping it: a caller alternating between one
// long-lived context and context.Background (a poll, then an answer that
// must not be cut off) registers once, not twice per round.
func (c *Conn) watch(ctx context.Context) {
	done := ctx.Done()
	if done == nil {
		if c.watchDone != nil && !c.dormant.Load() {
			// Under mu, as interrupt checks it: a callback that saw it
			// unset has set interrupted before begin looks at it.
			c.mu.Lock()
			c.dormant.Store(true)
			c.mu.Unlock()
		}
		return
	}
	if done == c.watchDone {
		if c.dormant.Load() {
			// A callback that ran while dormant did nothing; ctx.Err(),
			// which begin checks next, reports it instead.
			c.dormant.Store(false)
		}
		return
	}
	c.mu.Lock()
	c.gen++
	stop := c.watchStop
	c.watchStop, c.watchDone = nil, done
	c.dormant.Store(false)
	if !c.closed.Load() {
		gen := c.gen
		c.watchStop = context.AfterFunc(ctx, func() { c.interrupt(gen) })
	}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// interrupt runs when a watched context is done: it makes blocked I/O on the
// current connection return. A callback of an older registration, or of a
// dormant one, is ignored.
func (c *Conn) interrupt(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.dormant.Load() {
		return
	}
	c.interrupted.Store(true)
	if c.nc != nil {
		_ = c.nc.SetDeadline(aLongTimeAgo)
	}
}

// rearm clears the past deadline that an interruption left on a connection
// holding a queued poll, instead of dropping it. The interruption broke no
// I/O (any call whose I/O failed dropped the connection), so the stream is
// intact, and dropping it would abandon a poll the server has registered.
// If the context of this call fired, ctx.Err() reports it next; if it fires
// later, its callback sets the deadline again.
func (c *Conn) rearm() {
	c.mu.Lock()
	if c.interrupted.Load() && c.nc != nil {
		_ = c.nc.SetDeadline(time.Time{})
		c.interrupted.Store(false)
	}
	c.mu.Unlock()
}

// drop closes the current connection, and with it any queued poll; the next
// call redials. A post on the new connection follows no poll answered on
// it: its answer is read at once (leaveAnswer), so that the caller learns
// at once what became of a post it sends again after a failure.
func (c *Conn) drop() {
	c.pipe.queued = false
	c.pipe.pending, c.pipe.lowatOn = "", false
	c.pipe.polled = time.Time{}
	c.mu.Lock()
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
	c.interrupted.Store(false)
	c.mu.Unlock()
}

// end finishes a response whose body was consumed.
func (c *Conn) end(h head) {
	if h.close || c.body.mode == bodyToEOF {
		c.drop()
	}
}

// skip discards the rest of the body (if short enough, else drops the
// connection) and returns result.
func (c *Conn) skip(op string, h head, limit int64, result error) error {
	if err := c.discarded(op, c.body.discard(limit)); err != nil {
		return result
	}
	c.end(h)
	return result
}

// status turns a non-2xx response into a *StatusError.
func (c *Conn) status(op string, h head) error {
	b, err := c.body.capture(maxStatusBody, maxDiscardSmall)
	if c.discarded(op, err) == nil {
		c.end(h)
	}
	return &StatusError{Op: op, Code: h.code, Body: b}
}

// discarded takes the result of discarding the rest of a body within its
// cap, and drops the connection when it failed. With a poll queued behind
// the answer (to a post), a body over the cap is read through instead,
// whatever its size: dropping the connection would abandon the poll (see
// lose), and discarding does not buffer. It has begun, so CutIfStalled cuts
// it off should it stall. A body up to EOF still ends the connection: the
// server closes it without reading the poll.
func (c *Conn) discarded(op string, err error) error {
	if errors.Is(err, errBodyTooLarge) && c.pipe.queued && c.body.mode != bodyToEOF {
		c.watchAnswer(time.Now())
		err = c.body.discard(math.MaxInt64)
		c.endAnswer()
	}
	switch {
	case err == nil:
	case c.pipe.queued && !errors.Is(err, errBodyTooLarge):
		_ = c.lose(context.Background(), op, err)
	default:
		c.drop()
	}
	return err
}

// fail classifies an I/O or framing error and drops the connection.
func (c *Conn) fail(ctx context.Context, op string, err error) error {
	c.drop()
	switch {
	case c.closed.Load():
		return fmt.Errorf("rapi: %s: %w", op, errClosed)
	case ctx.Err() != nil:
		return fmt.Errorf("rapi: %s: %w", op, ctx.Err())
	case errors.Is(err, errMalformed):
		return fmt.Errorf("rapi: %s: %w", op, err)
	}
	return fmt.Errorf("rapi: %s: %w: %w", op, ErrTransport, err)
}

// salvage handles a failed write: a server may answer (413, 5xx) and close
// before reading the whole body, and that answer says more than the write
// error. It waits briefly for it, then drops the connection.
func (c *Conn) salvage(ctx context.Context, op string, werr error) error {
	if c.closed.Load() || ctx.Err() != nil {
		return c.fail(ctx, op, werr)
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(salvageWait))
	h, err := readHead(c.br, &c.spill, &defaultLimits, nil)
	if err != nil || h.code/100 == 2 {
		return c.fail(ctx, op, werr)
	}
	c.body.init(c.br, &c.spill, h, &defaultLimits)
	b, _ := c.body.capture(maxStatusBody, 0)
	c.drop()
	return &StatusError{Op: op, Code: h.code, Body: b}
}
