package pool

import (
	"sync"

	"github.com/valyala/bytebufferpool"
)

// maxKept bounds the number of buffers kept, whatever their size. A slot
// needs two (request and response); the rest is slack for handlers that
// take a third.
const maxKept = 4

// Buffers is a per-slot free list of byte buffers that keeps at most
// retainCap bytes (the sum of cap(buf.B) over the buffers it holds).
//
// It does not sit on bytebufferpool.Pool: that pool is a process-wide
// sync.Pool whose size limit comes from calibration (none before its first
// 42000 Puts, then a percentile of observed lengths), so it would keep a
// 6 MiB buffer and its contents are invisible to Retained. A tiny list owned
// by one slot keeps an exact count, has a hard bound, and allocates
// nothing once warm. ByteBuffer is still the currency, for its io.Writer and
// append helpers.
//
// Create it with NewBuffers; the zero value keeps nothing. Its methods are
// safe for concurrent use; the lock is uncontended in the intended one
// slot, one Buffers use.
type Buffers struct {
	mu        sync.Mutex
	free      [maxKept]*bytebufferpool.ByteBuffer
	n         int // free[:n] are kept
	retained  int
	retainCap int
}

// NewBuffers returns a free list that keeps at most retainCap bytes of
// buffer capacity between uses. retainCap <= 0 keeps nothing.
func NewBuffers(retainCap int) *Buffers {
	return &Buffers{retainCap: max(retainCap, 0)}
}

// Get returns an empty buffer, a kept one if there is any: the one put back
// last (the runtime relies on it to give each buffer back to the same use).
// The caller owns it until it passes it to Put.
func (b *Buffers) Get() *bytebufferpool.ByteBuffer {
	b.mu.Lock()
	if b.n == 0 {
		b.mu.Unlock()
		return new(bytebufferpool.ByteBuffer)
	}
	b.n--
	buf := b.free[b.n]
	b.free[b.n] = nil
	b.retained -= cap(buf.B)
	b.mu.Unlock()
	return buf
}

// Put gives buf back. It is reset and kept if that keeps the retained
// total within the cap (so a buffer with cap(buf.B) > retainCap is never
// kept), otherwise dropped for the garbage collector. Either way the
// caller must not touch buf, or any slice of buf.B, after Put. A nil buf,
// or one already kept, is ignored.
func (b *Buffers) Put(buf *bytebufferpool.ByteBuffer) {
	if buf == nil {
		return
	}
	c := cap(buf.B)
	b.mu.Lock()
	for _, k := range b.free[:b.n] {
		if k == buf {
			// A second Put of the same buffer would give it to two owners.
			b.mu.Unlock()
			return
		}
	}
	if b.n == maxKept || c > b.retainCap-b.retained {
		b.mu.Unlock()
		// Let go of the array even if a careless caller keeps buf.
		buf.B = nil
		return
	}
	buf.B = buf.B[:0]
	b.free[b.n] = buf
	b.n++
	b.retained += c
	b.mu.Unlock()
}

// Retained reports the bytes of buffer capacity currently kept.
func (b *Buffers) Retained() int {
	b.mu.Lock()
	r := b.retained
	b.mu.Unlock()
	return r
}
