package rapi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
)

// The body of an answer: Content-Length, chunked, or up to EOF, read
// within bounds.

// Body framings.
const (
	bodyLength  = iota // Content-Length
	bodyChunked        // Transfer-Encoding: chunked
	bodyToEOF          // neither: until the server closes
)

// body reads one response body per its framing. It never reads past the end
// of the body, so the connection stays usable after it.
type body struct {
	br       *bufio.Reader
	spill    *[]byte
	mode     int
	left     int64 // bytes left in the body (length) or in the current chunk
	framing  int   // budget of each chunk line
	trailers int   // budget left for the trailers
	headers  int   // trailer field budget
	crlf     bool  // a chunk's data ended: its CRLF comes next
	done     bool
}

func (b *body) init(br *bufio.Reader, spill *[]byte, h head, lim *limits) {
	*b = body{br: br, spill: spill, framing: lim.framing, trailers: lim.framing, headers: lim.headers}
	switch {
	case h.chunked:
		b.mode = bodyChunked
	case h.length >= 0:
		b.mode, b.left, b.done = bodyLength, h.length, h.length == 0
	default:
		b.mode = bodyToEOF
	}
}

// buffered reports whether the whole body is in the reader's buffer, so
// that reading it cannot block.
func (b *body) buffered() bool {
	return b.done || b.mode == bodyLength && b.left <= int64(b.br.Buffered())
}

// read reads at most len(p) > 0 bytes of the body; io.EOF at its end.
func (b *body) read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	if b.mode == bodyToEOF {
		n, err := b.br.Read(p)
		if err == io.EOF {
			b.done = true
		}
		return n, err
	}
	if b.left == 0 { // chunked: between chunks
		if err := b.nextChunk(); err != nil {
			return 0, err
		}
		if b.done {
			return 0, io.EOF
		}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.br.Read(p)
	b.left -= int64(n)
	if b.left == 0 {
		if b.mode == bodyLength {
			b.done = true
		} else {
			b.crlf = true
		}
		if err == io.EOF {
			err = nil
		}
	} else if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// nextChunk reads the CRLF ending the previous chunk and the next size line,
// or, for the last chunk, the trailers.
func (b *body) nextChunk() error {
	if b.crlf {
		budget := len("\r\n") // nothing else may follow the data
		line, err := readLine(b.br, b.spill, &budget)
		if err == nil && len(line) != 0 || errors.Is(err, errTooLong) {
			return errChunkTooLong
		}
		if err != nil {
			return b.framingErr(err)
		}
		b.crlf = false
	}
	budget := b.framing
	line, err := readLine(b.br, b.spill, &budget)
	if err != nil {
		return b.framingErr(err)
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i] // chunk extensions are ignored
	}
	line = bytes.TrimRight(line, " \t")
	size, ok := parseHex(line)
	if !ok {
		return fmt.Errorf("%w: bad chunk size %q", errMalformed, clip(line))
	}
	if size > 0 {
		b.left = size
		return nil
	}
	for { // trailers, ignored but bounded
		line, err := readLine(b.br, b.spill, &b.trailers)
		if err != nil {
			return b.framingErr(err)
		}
		if len(line) == 0 {
			b.done = true
			return nil
		}
		if b.headers--; b.headers < 0 {
			return errTooManyHeaders
		}
		if _, _, ok := splitHeader(line); !ok {
			return fmt.Errorf("%w: bad trailer line %q", errMalformed, clip(line))
		}
	}
}

func (b *body) framingErr(err error) error {
	if errors.Is(err, errTooLong) {
		return errFramingTooLarge
	}
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF // the body had started
	}
	return err
}

// parseHex parses 1 to 15 hex digits (always fits an int64).
func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		var d byte
		switch {
		case isDigit(c):
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}

// readAll reads the whole body into dst[:0], growing dst only as needed and
// never beyond max+1 bytes. A longer body returns errBodyTooLarge with the
// body partly read. A declared length is checked before any allocation.
func (b *body) readAll(dst []byte, limit int) ([]byte, error) {
	dst = dst[:0]
	if b.mode == bodyLength {
		if b.left > int64(limit) {
			return dst, errBodyTooLarge
		}
		n := int(b.left)
		if cap(dst) < n {
			dst = make([]byte, n)
		} else {
			dst = dst[:n]
		}
		for off := 0; off < n; {
			m, err := b.read(dst[off:])
			off += m
			if err != nil && off < n {
				return dst[:off], err
			}
		}
		return dst, nil
	}
	for {
		if b.mode == bodyChunked {
			if b.left == 0 && !b.done {
				if err := b.nextChunk(); err != nil {
					return dst, err
				}
				continue
			}
			if b.done {
				return dst, nil
			}
			if int64(len(dst))+b.left > int64(limit) {
				return dst, errBodyTooLarge // the declared chunk is over the limit
			}
		}
		if len(dst) == cap(dst) {
			if len(dst) > limit {
				return dst, errBodyTooLarge
			}
			want := min(max(2*cap(dst), 512), limit+1)
			if b.mode == bodyChunked && b.left > 0 {
				// The chunk size is known: grow once for it (still capped).
				want = max(int(min(int64(len(dst))+b.left, int64(limit+1))), len(dst)+1)
			}
			dst = slices.Grow(dst, want-len(dst))
		}
		// slices.Grow may round the capacity up. Read no further than one
		// byte past the limit, which is enough to tell the body too large.
		n, err := b.read(dst[len(dst):min(cap(dst), limit+1)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst, errBodyTooLarge
		}
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// discard skips the rest of the body if it ends within limit bytes. It
// returns errBodyTooLarge otherwise (the connection must then be dropped).
func (b *body) discard(limit int64) error {
	if b.mode == bodyToEOF {
		return errBodyTooLarge // the connection ends with it anyway
	}
	for !b.done {
		if b.left == 0 {
			if err := b.nextChunk(); err != nil {
				return err
			}
			continue
		}
		if b.left > limit {
			return errBodyTooLarge
		}
		n, err := b.br.Discard(int(b.left))
		limit -= int64(n)
		b.left -= int64(n)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if b.mode == bodyLength {
			b.done = true
		} else {
			b.crlf = true
		}
	}
	return nil
}

// capture returns the start of the body (at most max bytes) for a
// StatusError, then skips the rest if it is short enough.
func (b *body) capture(keep int, limit int64) ([]byte, error) {
	if b.mode == bodyLength {
		keep = int(min(int64(keep), b.left))
	}
	buf := make([]byte, keep)
	n := 0
	for n < keep {
		m, err := b.read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return buf[:n:n], nil
		}
		if err != nil {
			return buf[:n:n], err
		}
	}
	return buf[:n:n], b.discard(limit)
}
