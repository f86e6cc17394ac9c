package rapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// The HTTP/1.1 answers a Conn reads: the answer to a post, and the /next
// answer read into an Invocation, both watched while they are read. Their
// head (head.go), the /next headers (nextheaders.go) and their body
// (body.go) are read below.

// answer reads the Runtime API's answer to a request written in full at
// posted (sink, if any, sees its headers). A 2xx means the request
// succeeded, whatever happens to the rest of the body.
func (c *Conn) answer(ctx context.Context, op string, sink headerSink, posted time.Time) error {
	c.awaitReply(posted)
	_, err := c.br.Peek(1)
	return c.readReply(ctx, op, sink, err)
}

// readReply reads the answer whose wait awaitReply marked, once its first
// byte has come, or failed to (peekErr). Until its head is read in full the
// wait may be cut (CutReply); a cut that came as the head did counts all the
// same, as the reply was due. Before the first byte the server has not
// answered the post, so it has not read a poll queued behind it either.
// The body, if it is not in already, is under CutIfStalled's watch, as any
// answer begun.
func (c *Conn) readReply(ctx context.Context, op string, sink headerSink, peekErr error) error {
	var h head
	err := peekErr
	if err == nil {
		h, err = readHead(c.br, &c.spill, &defaultLimits, sink)
	}
	if c.endReply() {
		err = ErrNoReply
	}
	switch {
	case err == nil:
	case peekErr != nil:
		return c.fail(ctx, op, err)
	default:
		return c.lose(ctx, op, err)
	}
	c.body.init(c.br, &c.spill, h, &defaultLimits)
	if !c.body.buffered() {
		c.watchAnswer(time.Now())
		defer c.endAnswer()
	}
	if h.code/100 != 2 {
		return c.status(op, h)
	}
	return c.skip(op, h, maxDiscardSmall, nil)
}

// awaitReply marks the wait for the reply to the post that went out at
// posted, for CutReply; a zero posted is never cut.
func (c *Conn) awaitReply(posted time.Time) {
	c.mu.Lock()
	c.replyPost = posted
	c.mu.Unlock()
}

// endReply ends the wait awaitReply marked, and reports whether CutReply
// cut it.
func (c *Conn) endReply() (cut bool) {
	c.mu.Lock()
	cut = c.replyCut
	c.replyPost, c.replyCut = time.Time{}, false
	c.mu.Unlock()
	return cut
}

// peekWithin waits for the first byte of the answer, and once d has passed
// without it, lowers the low-water mark and waits on.
func (c *Conn) peekWithin(d time.Duration) ([]byte, error) {
	if c.br.Buffered() > 0 || !c.pipe.lowatOn {
		return c.br.Peek(1)
	}
	c.mu.Lock()
	if !c.interrupted.Load() {
		_ = c.nc.SetReadDeadline(time.Now().Add(d))
	}
	c.mu.Unlock()
	b, err := c.br.Peek(1)
	if err == nil || c.interrupted.Load() || !errors.Is(err, os.ErrDeadlineExceeded) {
		c.clearDeadline()
		return b, err
	}
	c.setLowat(0)
	c.clearDeadline()
	return c.br.Peek(1)
}

// clearDeadline removes peekWithin's deadline, unless an interruption has
// set its own since.
func (c *Conn) clearDeadline() {
	c.mu.Lock()
	if !c.interrupted.Load() {
		_ = c.nc.SetReadDeadline(time.Time{})
	}
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
// the answer to a post, a body over the cap is read through instead,
// whatever its size. Dropping the connection would abandon the poll (see
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

// errLostPoll ends the error Next returns, once, for a dropped connection
// that held a queued poll. It was dropped after the answer to the post in
// front of the poll had begun (see lose).
var errLostPoll = errors.New("the poll queued behind it was lost with its connection " +

	"(the Runtime API may still hand it an invocation, which then fails)")

// lose is fail for an answer to a post that broke once begun. The server
// reads the poll queued behind a post as soon as it has answered the post.
// It keeps a poll whose connection ends registered; the emulator hands it
// the next invocation, which then fails. With the framing lost, that poll's
// answer cannot be read anymore. The next Next reports it, so that the
// caller can log it, then polls afresh.
func (c *Conn) lose(ctx context.Context, op string, err error) error {
	queued := c.pipe.queued
	err = c.fail(ctx, op, err)
	if queued && !c.closed.Load() {
		c.pipe.lost = fmt.Errorf("rapi: %s: the answer to the last %s broke: %w; %w", opNext, op, err, errLostPoll)
	}
	return err
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
		// Nothing that can be answered; its deadline says how long the
		// Runtime API holds it.
		d, ms := inv.Deadline, inv.DeadlineMs
		inv.reset()
		inv.Deadline, inv.DeadlineMs = d, ms
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

// resetKeepingID empties inv after an answer failed. It keeps the request
// ID when one was read and is safe to post to. The invocation was handed
// out, and only the runtime can still end it before its deadline. It keeps
// the invocation ID too, if read, so that the error answer echoes it.
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

// What Next does with an answer that breaks off. CutIfStalled cuts off a
// peer that stops mid-answer. The request ID of an answer that failed after
// it was read is kept. So the caller can report that invocation with Fail
// instead of leaving it to its deadline.
//
// Stalls are watched from outside rather than with a read deadline. Setting
// and clearing a deadline around every answer adds a timer, and a wake-up of
// the network poller, to every invocation. That is about 4 µs of a 11 µs
// Next+Respond in BenchmarkNextRespond. Recording when the answer began costs
// a clock read and a lock.

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
