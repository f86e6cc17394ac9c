package rapi

import (
	"errors"
	"io"
	"strconv"
)

// crlf ends a chunk's data.
var crlf = []byte("\r\n")

// streamWriter is what a body that writes itself out (io.WriterTo) writes
// to. Each Write becomes one chunk, sent with writev from the caller's
// bytes (the size line, the bytes, CRLF). So the body is not copied into
// the chunk buffer. WriteString and ReadFrom, what strings.Reader and
// *os.File fall back on, go through the chunk buffer, as does a body that
// is only an io.Reader. It lives in its Conn, so a stream allocates nothing
// for it.
type streamWriter struct {
	c    *Conn
	head bool  // the request head has not gone out yet
	sent int64 // body bytes sent
	err  error // the first write error: the connection is unusable
	line [18]byte
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	c := w.c
	line := strconv.AppendInt(w.line[:0], int64(len(p)), 16)
	line = append(line, '\r', '\n')
	c.bufs = c.parts[:0]
	if w.head {
		c.bufs = append(c.bufs, c.req.head)
	}
	c.bufs = append(c.bufs, line, p, crlf)
	_, err := c.bufs.WriteTo(c.nc)
	c.parts = [5][]byte{}
	return w.done(len(p), err)
}

// WriteString copies s into the chunk buffer, streamChunk bytes at a time:
// a net.Conn takes only []byte.
func (w *streamWriter) WriteString(s string) (int, error) {
	n := 0
	for len(s) > 0 && w.err == nil {
		k := copy(w.c.sbuf[chunkPrefix:chunkPrefix+streamChunk], s)
		if _, err := w.writeChunk(k); err != nil {
			return n, err
		}
		n, s = n+k, s[k:]
	}
	return n, w.err
}

// ReadFrom reads r into the chunk buffer, one chunk per Read. It is Stream's
// path for a body that is not an io.WriterTo. It returns r's error (nil at
// io.EOF) or the write error.
func (w *streamWriter) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	for w.err == nil {
		k, rerr := readSome(r, w.c.sbuf[chunkPrefix:chunkPrefix+streamChunk])
		if k > 0 {
			if _, err := w.writeChunk(k); err != nil {
				return n, err
			}
			n += int64(k)
		}
		if errors.Is(rerr, io.EOF) {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
	return n, w.err
}

// writeChunk sends the k bytes in the chunk buffer as one chunk.
func (w *streamWriter) writeChunk(k int) (int, error) {
	c := w.c
	var err error
	if w.head {
		c.bufs = append(c.parts[:0], c.req.head, c.chunk(k))
		_, err = c.bufs.WriteTo(c.nc)
		c.parts = [5][]byte{}
	} else {
		_, err = c.nc.Write(c.chunk(k))
	}
	return w.done(k, err)
}

func (w *streamWriter) done(n int, err error) (int, error) {
	if err != nil {
		w.err = err
		return 0, err
	}
	w.head = false
	w.sent += int64(n)
	return n, nil
}
