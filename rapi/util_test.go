package rapi

import (
	"bufio"
	"io"
	"unsafe"
)

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }

func newBenchReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 4096) }

// always is a Pipeline condition that always queues.
func always() bool { return true }

// queueOnly pipelines cn's polls without lazy answers: each post still
// reads its own answer, and the next Next only the queued poll's. The
// table in the package doc is the same either way; the runtime's Conns
// (WithPipeline) also leave the answers to Next.
func queueOnly(cn *Conn) {
	cn.pipe.when, cn.pipe.lazy = always, false
}

// bytes returns the whole request as one slice.
func (r *request) bytes() []byte {
	out := append([]byte(nil), r.head[:r.split]...)
	out = append(out, r.mid...)
	out = append(out, r.head[r.split:]...)
	return append(out, r.body...)
}
