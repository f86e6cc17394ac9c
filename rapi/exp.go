package rapi

import (
	"context"
	"fmt"
	"syscall"
)

// Experiment hooks for issue #9's throttle study; not part of the API.

// AfterWrite sets f to run in post after the request has been written in
// full, before its answer is read.
func (c *Conn) AfterWrite(f func()) { c.afterWrite = f }

// SendNext writes GET /next now; the next Next only reads its answer.
func (c *Conn) SendNext(ctx context.Context) error {
	if err := c.begin(ctx, opNext); err != nil {
		return err
	}
	if c.queued {
		return fmt.Errorf("rapi: %s: %w: a /next is queued already", opNext, ErrInvalid)
	}
	if _, err := c.nc.Write(c.c.pre.next); err != nil {
		return c.fail(ctx, opNext, err)
	}
	c.queued = true
	return nil
}

// DeferAnswer makes post return once written (with its poll queued): the
// answer is read by the next Next, and its error handed to f. lowat > 0
// sets SO_RCVLOWAT so that the answer alone does not wake the process.
func (c *Conn) DeferAnswer(f func(error), lowat int) { c.deferred, c.lowat = f, lowat }

func (c *Conn) setLowat() {
	if c.lowat <= 0 || c.lowatSet == c.nc {
		return
	}
	c.lowatSet = c.nc
	if sc, ok := c.nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) {
				_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, c.lowat)
			})
		}
	}
}

// readDeferred reads the answer to the last post, if it is still unread.
func (c *Conn) readDeferred(ctx context.Context) {
	if c.pendingOp == "" {
		return
	}
	op := c.pendingOp
	c.pendingOp = ""
	err := c.answer(ctx, op, nil)
	if c.deferred != nil {
		c.deferred(err)
	}
}
