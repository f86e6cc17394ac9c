package rapi

import (
	"bufio"
	"io"
	"unsafe"
)

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }

func newBenchReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 4096) }
