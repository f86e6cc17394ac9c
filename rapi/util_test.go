package rapi

import (
	"bufio"
	"io"
	"unsafe"
)

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }

func newBenchReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 4096) }

// bytes returns the whole request as one slice.
func (r *request) bytes() []byte {
	out := append([]byte(nil), r.head[:r.split]...)
	out = append(out, r.mid...)
	out = append(out, r.head[r.split:]...)
	return append(out, r.body...)
}
