package rapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// The socket under a Conn: dialing it, watching the caller's context,
// and dropping it when a call breaks it.

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

// dial opens one connection, bounded by DialTimeout and ctx.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	return c.opts.Dial(ctx, "tcp", c.addr)
}

// watch arranges for ctx to interrupt blocked I/O. The registration is kept
// across calls with the same Done channel. So a long-lived context costs
// nothing per call; changing contexts costs one registration. A context
// that can never be done (Done is nil) leaves the registration in place,
// dormant, rather than dropping it. A caller may alternate between one
// long-lived context and context.Background: a poll, then an answer that
// must not be cut off. It registers once, not twice per round.
func (c *Conn) watch(ctx context.Context) {
	done := ctx.Done()
	if done == nil {
		if c.watchDone != nil && !c.dormant.Load() {
			// Under mu, as interrupt checks it. A callback that saw it unset
			// has set interrupted before begin looks at it.
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
// I/O: any call whose I/O failed dropped the connection. So the stream is
// intact, and dropping it would abandon a poll the server has registered. If
// the context of this call fired, ctx.Err() reports it next. If it fires
// later, its callback sets the deadline again.
func (c *Conn) rearm() {
	c.mu.Lock()
	if c.interrupted.Load() && c.nc != nil {
		_ = c.nc.SetDeadline(time.Time{})
		c.interrupted.Store(false)
	}
	c.mu.Unlock()
}

// staleConn reports whether err, met before any byte of a response on a
// reused connection, means the server had closed it while idle. Only Next
// asks: the server cannot have seen its GET, which is sent again.
func (c *Conn) staleConn(ctx context.Context, err error) bool {
	if c.closed.Load() || ctx.Err() != nil {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// trim drops references to the caller's slices and to scratch buffers that
// a rare large response grew. So what a Conn keeps stays small. A post
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

// drop closes the current connection, and with it any queued poll; the next
// call redials. A post on the new connection follows no poll answered on
// it, so its answer is read at once (leaveAnswer). The caller learns at
// once what became of a post it sends again after a failure.
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

// fail classifies an I/O or framing error and drops the connection.
func (c *Conn) fail(ctx context.Context, op string, err error) error {
	c.drop()
	switch {
	case errors.Is(err, ErrNoReply): // whatever else ended the wait
		return fmt.Errorf("rapi: %s: %w: %w", op, ErrTransport, err)
	case c.closed.Load():
		return fmt.Errorf("rapi: %s: %w", op, errClosed)
	case ctx.Err() != nil:
		return fmt.Errorf("rapi: %s: %w", op, ctx.Err())
	case errors.Is(err, errMalformed):
		return fmt.Errorf("rapi: %s: %w", op, err)
	}
	return fmt.Errorf("rapi: %s: %w: %w", op, ErrTransport, err)
}

// salvage handles a failed write. A server may answer (413, 5xx) and close
// before reading the whole body; that answer says more than the write
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
