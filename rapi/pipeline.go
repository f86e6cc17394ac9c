package rapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// Pipelining: a post whose caller says queue writes the Conn's next GET
// /next right behind it. It leaves its answer to the Next that reads that
// poll. The package doc says what it is for, and what happens to a queued
// poll when a post fails.

const (
	// lazyFresh: an answer is left for the next Next only when the poll it
	// follows was answered this recently. So the server cannot have closed
	// the connection while idle. The caller retries a post on a stale
	// connection, and needs its answer now.
	// The default of pipeline.fresh, which tests shorten.
	lazyFresh = time.Second
	// lazyWake bounds how long the answer may sit unread behind the receive
	// low-water mark when no invocation follows it. Only an answer shorter
	// than a 202 waits that long; any other wakes the slot, a closed
	// connection too. At 10 ms, every slot whose next invocation came later
	// woke once more per invocation to read its 202. At 2000 inv/s (open
	// model, fake API, medians of 5) that cost 245 µs of CPU per invocation
	// at N=64 and 262 at N=512. This bound costs 192 and 222 µs. Saturation
	// costs the same, and the share rejected under the emulator is the same.
	lazyWake = lazyFresh
	// maxLowat bounds the learned size of an accepted answer.
	maxLowat = 1 << 10
	// lazyMaxBody: the answer to a post whose body is larger is read at once,
	// its poll still queued. A post left to Next keeps its body until then,
	// and an idle slot may wait long for its next invocation. What a Conn
	// keeps of its caller's bytes between invocations stays under this,
	// whatever the retain cap.
	lazyMaxBody = 64 << 10
)

// pipeline is the state of a Conn's pipelining: the poll queued behind the
// last post, and the post whose answer is left to the next Next. It also
// holds the receive low-water mark that keeps an accepted answer from waking
// the process. Only the Conn's owner touches it.
type pipeline struct {
	// lazy leaves the answer to a post with a poll queued behind it to
	// the next Next. On; tests turn it off.
	lazy bool
	// queued: a GET /next went out behind the last post on nc and its
	// answer has not been read. Every drop forgets it, so it implies
	// nc != nil.
	queued bool
	// lost is what Next reports, once, about a queued poll that a drop
	// took with it after the server may have registered it (lose).
	lost error
	// pending names the post whose answer Next must read first, which
	// went out at posted. The Conn's req holds that post meanwhile (trim
	// leaves it), to be sent again. polled is when the last /next answer
	// began: an answer is left only within fresh (lazyFresh) of it.
	pending string
	posted  time.Time
	polled  time.Time
	fresh   time.Duration
	// lowat is the learned size of an accepted answer plus one; lowatOn:
	// the connection's SO_RCVLOWAT is above 1. The rest lets setLowat
	// work without allocating.
	lowat    int
	lowatOn  bool
	lowatArg int
	lowatFn  func(fd uintptr)
	raw      syscall.RawConn
	rawFor   net.Conn
}

func newPipeline() pipeline {
	return pipeline{lazy: true, fresh: lazyFresh}
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
