package rapi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// The head of an answer, its status line and headers, read within bounds;
// and the checks of header bytes that requests share.

// Bounds on what is read from the Runtime API, whatever it sends.
const (
	maxHeadBytes   = 64 << 10 // status line + headers (+ interim 1xx responses)
	maxHeaderCount = 100      // header fields in one response
	maxFraming     = 64 << 10 // each chunk-size line; the trailers of one body
	maxInterim     = 8        // 1xx responses before the final one
	maxSpillKept   = 8 << 10  // long-line scratch kept between calls
)

// limits are the parser's bounds; tests and fuzzers shrink them.
//
// framing bounds each chunk-size line (extensions included) and, separately,
// all the trailers of a body together. It does not bound the number of
// chunks: a valid 6 MiB body in 512-byte chunks has 12 288 size lines. The
// payload limit bounds that number instead, as every chunk before the last
// carries at least one byte. Memory stays bounded: spill grows to framing
// at most, and only for lines longer than the bufio buffer. So do the bytes
// read per payload byte (a size line, then CRLF). The rest is bounded by
// time, which the stall tracking (beginAnswer) and the context own.
type limits struct {
	head    int
	headers int
	framing int
}

var defaultLimits = limits{head: maxHeadBytes, headers: maxHeaderCount, framing: maxFraming}

// head is the framing of one response.
type head struct {
	code    int
	length  int64 // Content-Length, -1 when absent
	chunked bool
	close   bool // the server will close (or HTTP/1.0 without keep-alive)
}

var (
	errHeadTooLarge    = fmt.Errorf("%w: status line and headers exceed %d bytes", errMalformed, maxHeadBytes)
	errFramingTooLarge = fmt.Errorf("%w: chunk framing: a chunk line or the trailers exceed %d bytes", errMalformed, maxFraming)
	errTooManyHeaders  = fmt.Errorf("%w: more than %d header fields", errMalformed, maxHeaderCount)
	errChunkTooLong    = fmt.Errorf("%w: chunk data longer than its size", errMalformed)
	errTooLong         = errors.New("over budget") // internal: readLine hit its budget
	errBodyTooLarge    = errors.New("body over limit")
)

// readLine returns the next line without CRLF (or bare LF). It consumes at
// most *budget bytes, and copies into *spill only lines longer than the
// bufio buffer. The slice is valid until the next read.
func readLine(br *bufio.Reader, spill *[]byte, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == nil {
		if len(line) > *budget {
			return nil, errTooLong
		}
		*budget -= len(line)
		return trimEOL(line), nil
	}
	buf := (*spill)[:0]
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(buf)+len(line) > *budget {
			return nil, errTooLong
		}
		buf = append(buf, line...)
		line, err = br.ReadSlice('\n')
	}
	if len(buf)+len(line) > *budget {
		return nil, errTooLong
	}
	buf = append(buf, line...)
	*spill = buf
	if err != nil {
		if err == io.EOF && len(buf) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	*budget -= len(buf)
	return trimEOL(buf), nil
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// headerSink receives the headers of a 2xx response other than the framing
// ones (Content-Length, Transfer-Encoding, Connection): *nextHeaders for
// /next, *extSink for the Extensions API. name and value are valid only
// during the call.
type headerSink interface {
	header(name, value []byte) error
}

// readHead reads the status line and headers of the final response, skipping
// interim 1xx responses. Headers of a 2xx response go to sink when it is not
// nil. Errors wrap errMalformed for bad framing; anything else comes from
// the reader (transport).
func readHead(br *bufio.Reader, spill *[]byte, lim *limits, sink headerSink) (head, error) {
	budget := lim.head
	defer func() {
		if cap(*spill) > maxSpillKept {
			*spill = nil
		}
	}()
	for interim := 0; ; interim++ {
		line, err := readLine(br, spill, &budget)
		if err != nil {
			return head{}, headErr(err)
		}
		minor, code, ok := parseStatusLine(line)
		if !ok {
			return head{}, fmt.Errorf("%w: bad status line %q", errMalformed, clip(line))
		}
		h := head{code: code, length: -1, close: minor == 0}
		var sawLength, sawTE, keepAlive, closeTok bool
		for n := 0; ; n++ {
			line, err = readLine(br, spill, &budget)
			if err != nil {
				return head{}, headErr(err)
			}
			if len(line) == 0 {
				break
			}
			if n == lim.headers {
				return head{}, errTooManyHeaders
			}
			name, value, ok := splitHeader(line)
			if !ok {
				return head{}, fmt.Errorf("%w: bad header line %q", errMalformed, clip(line))
			}
			switch {
			case equalFold(name, hdrContentLength):
				v, ok := parseDecimal(value)
				if !ok || sawLength && v != h.length {
					return head{}, fmt.Errorf("%w: bad Content-Length %q", errMalformed, clip(value))
				}
				h.length, sawLength = v, true
			case equalFold(name, hdrTransferEnc):
				if sawTE || !equalFold(value, "chunked") {
					return head{}, fmt.Errorf("%w: unsupported Transfer-Encoding %q", errMalformed, clip(value))
				}
				h.chunked, sawTE = true, true
			case equalFold(name, hdrConnection):
				c, k := connectionTokens(value)
				closeTok, keepAlive = closeTok || c, keepAlive || k
			default:
				if sink != nil && code/100 == 2 {
					if err := sink.header(name, value); err != nil {
						return head{}, err
					}
				}
			}
		}
		if code/100 == 1 {
			if code == 101 || interim == maxInterim {
				return head{}, fmt.Errorf("%w: unexpected status %d", errMalformed, code)
			}
			continue
		}
		if h.chunked && sawLength {
			// RFC 9112 6.3: a sign of smuggling; treat as an error.
			return head{}, fmt.Errorf("%w: both Content-Length and Transfer-Encoding", errMalformed)
		}
		if keepAlive {
			h.close = false
		}
		if closeTok {
			h.close = true
		}
		if code == 204 || code == 304 {
			h.length, h.chunked = 0, false
		}
		return h, nil
	}
}

func headErr(err error) error {
	if errors.Is(err, errTooLong) {
		return errHeadTooLarge
	}
	return err
}

// parseStatusLine accepts "HTTP/1.x DDD[ reason]".
func parseStatusLine(line []byte) (minor, code int, ok bool) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || !isDigit(line[7]) || line[8] != ' ' {
		return 0, 0, false
	}
	minor = int(line[7] - '0')
	for _, c := range line[9:12] {
		if !isDigit(c) {
			return 0, 0, false
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 || code > 599 {
		return 0, 0, false
	}
	if rest := line[12:]; len(rest) > 0 {
		if rest[0] != ' ' || !headerSafe(rest) {
			return 0, 0, false
		}
	}
	return minor, code, true
}

// splitHeader splits "Name: value", trimming optional whitespace around the
// value. Names must be tokens (no space before the colon, no obs-fold).
func splitHeader(line []byte) (name, value []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return nil, nil, false
	}
	name = line[:i]
	for _, c := range name {
		if !tokenByte[c] {
			return nil, nil, false
		}
	}
	value = line[i+1:]
	for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
		value = value[1:]
	}
	for len(value) > 0 && (value[len(value)-1] == ' ' || value[len(value)-1] == '\t') {
		value = value[:len(value)-1]
	}
	if !headerSafe(value) {
		return nil, nil, false
	}
	return name, value, true
}

// ValidHeaderValue reports whether v may be sent as a header value. It must
// be at most limit bytes, none of them a control byte (RFC 9110
// field-content). A caller that would rather replace a value than have it
// refused (ErrInvalid) checks it with this first.
func ValidHeaderValue(v string, limit int) bool {
	if len(v) > limit {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !valueByte(v[i]) {
			return false
		}
	}
	return true
}

func headerSafe(v []byte) bool {
	for _, c := range v {
		if !valueByte(c) {
			return false
		}
	}
	return true
}

// valueByte: field-content of RFC 9110 (VCHAR, SP, HTAB, obs-text).
func valueByte(c byte) bool {
	return c >= 0x20 && c != 0x7f || c == '\t'
}

var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// connectionTokens looks for "close" and "keep-alive" in a Connection list.
func connectionTokens(v []byte) (closeTok, keepAlive bool) {
	for len(v) > 0 {
		tok := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		tok = bytes.Trim(tok, " \t")
		closeTok = closeTok || equalFold(tok, "close")
		keepAlive = keepAlive || equalFold(tok, "keep-alive")
	}
	return closeTok, keepAlive
}

// parseDecimal parses 1 to 18 ASCII digits: no sign, no space, no overflow
// (18 digits always fit in an int64).
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// equalFold compares ASCII case-insensitively without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func clipString(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
