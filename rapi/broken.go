package rapi

import "time"

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

// requestID returns the request ID gathered by header so far, or "" when
// there is none or it is not safe in a URL path. It allocates: error paths
// only.
func (s *nextHeaders) requestID() string {
	id := s.gathered(fRequestID)
	if checkRequestID(id) != nil {
		return ""
	}
	return id
}

// gathered returns fresh field f as read by header so far, or "".
func (s *nextHeaders) gathered(f int) string {
	if s.inv == nil || s.seen&(1<<f) == 0 {
		return ""
	}
	return string(s.strs[s.spans[f].off:s.spans[f].end])
}
