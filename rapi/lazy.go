package rapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

const (
	// lazyFresh: an answer is left for the next Next only when the poll it
	// follows was answered this recently, so that the connection cannot
	// have been closed by the server while idle (a post on a stale
	// connection is retried by the caller, which needs its answer now).
	// The default of Conn.fresh, which tests shorten.
	lazyFresh = time.Second
	// lazyWake bounds how long the answer may sit unread behind the
	// receive low-water mark when no invocation follows it: only an
	// answer shorter than a 202 waits that long (any other wakes the
	// poller, a closed connection too). At 10 ms, every slot whose next
	// invocation came later woke once more per invocation to read its
	// 202: at 2000 inv/s (open model, fake API, medians of 5) that cost
	// 245 µs of CPU per invocation at N=64 and 262 at N=512, against 192
	// and 222 µs with this bound. Saturation costs the same, and the
	// share rejected under the emulator is the same.
	lazyWake = lazyFresh
	// maxLowat bounds the learned size of an accepted answer.
	maxLowat = 1 << 10
)

// LazyAnswer turns on (or off) leaving the answer to a post with a queued
// poll (QueueNext) to the next Next: Respond and Fail then return once the
// request is written, and Next reads their answer before the poll's,
// returning an *AnswerError when it is not a success. Meanwhile the
// connection's receive low-water mark is set just above the size of the
// last accepted answer, so that a plain 202 does not wake the process: it
// is read with the next invocation, or after a second without one. Any other
// answer is read at once. On the emulator, that wake-up of the runtime is
// what delays its registration of the queued poll (the server registers it
// right after sending the 202): with it gone, fewer invocations that
// callers send at once are throttled.
//
// Until its answer is read, the post stays with the Conn (the caller's
// body too, which must not change meanwhile): when the connection ends
// before the first byte of that answer, Next sends the post once more on a
// new connection, as the server may have lost it. ReadAnswer reads an
// answer left unread when no Next follows.
//
// A post is answered at once as before when the poll before it was
// answered more than a second ago or on another connection (the post after
// a failure), and always by Stream. Default off.
func (c *Conn) LazyAnswer(on bool) { c.lazy = on }

// leaveAnswer reports whether the answer to the post just written (with a
// poll queued behind it) is left to Next, and prepares for it.
func (c *Conn) leaveAnswer(op string) bool {
	if !c.lazy || time.Since(c.polled) > c.fresh {
		return false
	}
	c.pending = op
	c.setLowat(c.lowat)
	return true
}

// ReadAnswer reads the answer to the last post when LazyAnswer left it to
// Next, and returns what Next would have returned for it: nil, or an
// *AnswerError. A poll queued behind the post stays queued. With no answer
// left unread it returns nil at once. It is for a caller that will not
// call Next again, at shutdown: Close alone would drop an answer that the
// Runtime API may have accepted unread.
func (c *Conn) ReadAnswer(ctx context.Context) error {
	if c.pending == "" {
		return nil
	}
	defer c.trim()
	if err := c.begin(ctx, c.pending); err != nil {
		return err
	}
	return c.readLeft(ctx)
}

// readLeft reads the answer that a post left to this Next (or ReadAnswer).
// A context that fires before its first byte broke nothing: the answer
// stays pending, and the poll queued. A connection that ends before it
// (reset, EOF) may have ended before the server took the post: the post,
// kept in req, is sent once more on a new connection, its answer read at
// once. If the first one was taken, the second is refused (400, or 410).
func (c *Conn) readLeft(ctx context.Context) error {
	op := c.pending
	c.pending = ""
	_, err := c.peekWithin(lazyWake)
	c.setLowat(0)
	if err != nil {
		if c.interrupted.Load() && !c.closed.Load() && ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			c.pending = op
			return fmt.Errorf("rapi: %s: %w", op, ctx.Err())
		}
		err = c.fail(ctx, op, err)
		if !errors.Is(err, ErrTransport) {
			return &AnswerError{Op: op, Err: err}
		}
		if err := c.post(ctx, op, &c.req, false); err != nil {
			return &AnswerError{Op: op, Err: err, Resent: true}
		}
		return nil
	}
	n := c.br.Buffered()
	if err := c.answer(ctx, op, nil); err != nil {
		if c.lost != nil { // reported here, with the answer's error
			c.lost = nil
			err = fmt.Errorf("%w; %w", err, errLostPoll)
		}
		return &AnswerError{Op: op, Err: err}
	}
	if c.nc != nil {
		c.lowat = min(n-c.br.Buffered()+1, maxLowat)
	}
	return nil
}

// peekWithin waits for the first byte of the answer, and once d has passed
// without it, lowers the low-water mark and waits on.
func (c *Conn) peekWithin(d time.Duration) ([]byte, error) {
	if c.br.Buffered() > 0 || !c.lowatOn {
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
