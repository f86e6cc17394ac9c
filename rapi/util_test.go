package rapi

import (
	"bufio"
	"io"
	"sync"
	"unsafe"
)

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }

func newBenchReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 4096) }

// always is a queue condition that always queues.
func always() bool { return true }

// queueing holds the condition of each Conn whose tests queue a poll
// behind its posts, as a runtime's slot decides its queue value.
var queueing sync.Map // *Conn -> func() bool

// pipe makes the posts of cn queue a poll behind them while when says so.
func pipe(cn *Conn, when func() bool) *Conn {
	queueing.Store(cn, when)
	return cn
}

// queueOf is the queue value of the next post of cn.
func queueOf(cn *Conn) bool {
	f, ok := queueing.Load(cn)
	return ok && f.(func() bool)()
}

// yes is what queuePtr points to: Stream only reads it.
var yes = true

// queuePtr is queueOf for Stream, without an allocation.
func queuePtr(cn *Conn) *bool {
	if queueOf(cn) {
		return &yes
	}
	return nil
}

// queueOnly pipelines cn's polls without lazy answers: each post still
// reads its own answer, and the next Next only the queued poll's. The
// table in the package doc is the same either way; the runtime's Conns
// also leave the answers to Next.
func queueOnly(cn *Conn) {
	cn.pipe.lazy = false
	pipe(cn, always)
}

// bytes returns the whole request as one slice.
func (r *request) bytes() []byte {
	out := append([]byte(nil), r.head[:r.split]...)
	out = append(out, r.mid...)
	out = append(out, r.head[r.split:]...)
	return append(out, r.body...)
}
