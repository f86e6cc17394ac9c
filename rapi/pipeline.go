package rapi

import (
	"net"
	"syscall"
	"time"
)

// Pipelining: a post whose caller says queue writes the Conn's next GET
// /next right behind it. It leaves its answer to the Next that reads that
// poll. The package doc says what it is for, and what happens to a queued
// poll when a post fails. Its steps are in conn.go, beside the calls.

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
