package rapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// The HTTP/1.1 answers a Conn reads: the answer to a post, and the /next
// answer read into an Invocation. Then the head of each, bounded. The /next
// headers' sink follows readHead, which calls it for each header. The body
// of each, read within bounds, comes last.

// answer reads the Runtime API's answer to a request written in full at
// posted (sink, if any, sees its headers). A 2xx means the request
// succeeded, whatever happens to the rest of the body.
func (c *Conn) answer(ctx context.Context, op string, sink headerSink, posted time.Time) error {
	c.awaitReply(posted)
	_, err := c.br.Peek(1)
	return c.readReply(ctx, op, sink, err)
}

// readReply reads the answer whose wait awaitReply marked, once its first
// byte has come, or failed to (peekErr). Until its head is read in full the
// wait may be cut (CutReply); a cut that came as the head did counts all the
// same, as the reply was due. Before the first byte the server has not
// answered the post, so it has not read a poll queued behind it either.
// The body, if it is not in already, is under CutIfStalled's watch, as any
// answer begun.
func (c *Conn) readReply(ctx context.Context, op string, sink headerSink, peekErr error) error {
	var h head
	err := peekErr
	if err == nil {
		h, err = readHead(c.br, &c.spill, &defaultLimits, sink)
	}
	if c.endReply() {
		err = ErrNoReply
	}
	switch {
	case err == nil:
	case peekErr != nil:
		return c.fail(ctx, op, err)
	default:
		return c.lose(ctx, op, err)
	}
	c.body.init(c.br, &c.spill, h, &defaultLimits)
	if !c.body.buffered() {
		c.watchAnswer(time.Now())
		defer c.endAnswer()
	}
	if h.code/100 != 2 {
		return c.status(op, h)
	}
	return c.skip(op, h, maxDiscardSmall, nil)
}

// end finishes a response whose body was consumed.
func (c *Conn) end(h head) {
	if h.close || c.body.mode == bodyToEOF {
		c.drop()
	}
}

// skip discards the rest of the body (if short enough, else drops the
// connection) and returns result.
func (c *Conn) skip(op string, h head, limit int64, result error) error {
	if err := c.discarded(op, c.body.discard(limit)); err != nil {
		return result
	}
	c.end(h)
	return result
}

// status turns a non-2xx response into a *StatusError.
func (c *Conn) status(op string, h head) error {
	b, err := c.body.capture(maxStatusBody, maxDiscardSmall)
	if c.discarded(op, err) == nil {
		c.end(h)
	}
	return &StatusError{Op: op, Code: h.code, Body: b}
}

// discarded takes the result of discarding the rest of a body within its
// cap, and drops the connection when it failed. With a poll queued behind
// the answer to a post, a body over the cap is read through instead,
// whatever its size. Dropping the connection would abandon the poll (see
// lose), and discarding does not buffer. It has begun, so CutIfStalled cuts
// it off should it stall. A body up to EOF still ends the connection: the
// server closes it without reading the poll.
func (c *Conn) discarded(op string, err error) error {
	if errors.Is(err, errBodyTooLarge) && c.pipe.queued && c.body.mode != bodyToEOF {
		c.watchAnswer(time.Now())
		err = c.body.discard(math.MaxInt64)
		c.endAnswer()
	}
	switch {
	case err == nil:
	case c.pipe.queued && !errors.Is(err, errBodyTooLarge):
		_ = c.lose(context.Background(), op, err)
	default:
		c.drop()
	}
	return err
}

// readNext reads the invocation whose answer has begun.
//
//go:noinline
func (c *Conn) readNext(ctx context.Context, inv *Invocation) error {
	// The answer has begun: the rest of it must not stall (see CutIfStalled).
	c.beginAnswer()
	defer c.endAnswer()
	c.hdrs.start(inv, &c.in)
	h, err := readHead(c.br, &c.spill, &defaultLimits, &c.hdrs)
	if err != nil {
		c.resetKeepingID(inv)
		return c.fail(ctx, opNext, err)
	}
	c.body.init(c.br, &c.spill, h, &defaultLimits)
	if h.code/100 != 2 {
		inv.reset()
		return c.status(opNext, h)
	}
	if err := c.hdrs.finish(); err != nil {
		// Nothing that can be answered; its deadline says how long the
		// Runtime API holds it.
		d, ms := inv.Deadline, inv.DeadlineMs
		inv.reset()
		inv.Deadline, inv.DeadlineMs = d, ms
		return c.skip(opNext, h, maxDiscardPayload, fmt.Errorf("rapi: %s: %w", opNext, err))
	}
	p, err := c.body.readAll(inv.Payload, c.c.opts.MaxRequestBytes)
	switch {
	case errors.Is(err, errBodyTooLarge):
		inv.Payload = p[:0]
		return c.skip(opNext, h, maxDiscardPayload, fmt.Errorf("rapi: %s: %w: request %s: body over %d bytes",
			opNext, ErrPayloadTooLarge, inv.RequestID, c.c.opts.MaxRequestBytes))
	case err != nil:
		c.resetKeepingID(inv)
		return c.fail(ctx, opNext, err)
	}
	inv.Payload = p
	c.end(h)
	return nil
}

// What Next does with an answer that breaks off. CutIfStalled cuts off a
// peer that stops mid-answer. The request ID of an answer that failed after
// it was read is kept. So the caller can report that invocation with Fail
// instead of leaving it to its deadline.
//
// Stalls are watched from outside rather than with a read deadline. Setting
// and clearing a deadline around every answer adds a timer, and a wake-up of
// the network poller, to every invocation. That is about 4 µs of a 11 µs
// Next+Respond in BenchmarkNextRespond. Recording when the answer began costs
// a clock read and a lock.

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

// Fields whose values are new for every invocation. They are gathered into
// one scratch buffer and turned into strings with a single allocation.
const (
	fRequestID = iota
	fTraceID
	fInvocationID
	fClientContext
	fCognitoIdentity
	nFresh
)

// Bits of nextHeaders.seen, for duplicate detection.
const (
	seenARN = 1 << (nFresh + iota)
	seenTenant
	seenContentType
	seenDeadline
)

// intern keeps the last value of headers that rarely change between
// invocations, so that an unchanged value costs no allocation.
type intern struct {
	arn, tenant, contentType string
}

func (in *intern) get(slot *string, v []byte) string {
	if string(v) != *slot { // compiles to a comparison without allocation
		*slot = string(v)
	}
	return *slot
}

// maxRetainedStrs bounds the scratch kept between invocations.
const maxRetainedStrs = 16 << 10

// nextHeaders parses the headers of a 2xx /next answer into an Invocation.
type nextHeaders struct {
	inv   *Invocation
	in    *intern
	strs  []byte
	spans [nFresh]struct{ off, end int }
	seen  uint32
}

func (s *nextHeaders) start(inv *Invocation, in *intern) {
	s.inv, s.in = inv, in
	s.strs = s.strs[:0]
	s.seen = 0
}

func (s *nextHeaders) dup(bit uint32, name string) error {
	if s.seen&bit != 0 {
		return fmt.Errorf("%w: repeated %s header", errMalformed, name)
	}
	s.seen |= bit
	return nil
}

func (s *nextHeaders) fresh(f int, name string, v []byte) error {
	if err := s.dup(1<<f, name); err != nil {
		return err
	}
	s.spans[f].off = len(s.strs)
	s.strs = append(s.strs, v...)
	s.spans[f].end = len(s.strs)
	return nil
}

// header handles one header of the response; unknown names are ignored.
func (s *nextHeaders) header(name, v []byte) error {
	switch len(name) {
	case len(hdrRequestID): // == len(hdrClientContext)
		if equalFold(name, hdrRequestID) {
			return s.fresh(fRequestID, hdrRequestID, v)
		}
		if equalFold(name, hdrClientContext) {
			return s.fresh(fClientContext, hdrClientContext, v)
		}
	case len(hdrTraceID):
		if equalFold(name, hdrTraceID) {
			return s.fresh(fTraceID, hdrTraceID, v)
		}
	case len(hdrInvocationID): // == len(hdrTenantID)
		if equalFold(name, hdrInvocationID) {
			return s.fresh(fInvocationID, hdrInvocationID, v)
		}
		if equalFold(name, hdrTenantID) {
			if err := s.dup(seenTenant, hdrTenantID); err != nil {
				return err
			}
			s.inv.TenantID = s.in.get(&s.in.tenant, v)
		}
	case len(hdrCognitoIdentity):
		if equalFold(name, hdrCognitoIdentity) {
			return s.fresh(fCognitoIdentity, hdrCognitoIdentity, v)
		}
	case len(hdrFunctionARN):
		if equalFold(name, hdrFunctionARN) {
			if err := s.dup(seenARN, hdrFunctionARN); err != nil {
				return err
			}
			s.inv.FunctionARN = s.in.get(&s.in.arn, v)
		}
	case len(hdrContentType):
		if equalFold(name, hdrContentType) {
			if err := s.dup(seenContentType, hdrContentType); err != nil {
				return err
			}
			s.inv.ContentType = s.in.get(&s.in.contentType, v)
		}
	case len(hdrDeadlineMs):
		if equalFold(name, hdrDeadlineMs) {
			if err := s.dup(seenDeadline, hdrDeadlineMs); err != nil {
				return err
			}
			s.deadline(v)
		}
	}
	return nil
}

// maxDeadlineMs is the last millisecond whose Unix nanoseconds fit in int64
// (April 2262). Past it, UnixNano and the arithmetic built on it wrap to
// 1677. So a later deadline is as unusable as a non-numeric one.
const maxDeadlineMs = math.MaxInt64 / int64(time.Millisecond)

func (s *nextHeaders) deadline(v []byte) {
	ms, ok := parseDecimal(v)
	if !ok || ms <= 0 || ms > maxDeadlineMs {
		s.inv.DeadlineErr = fmt.Errorf("%w: bad %s %q", errMalformed, hdrDeadlineMs, clip(v))
		return
	}
	s.inv.DeadlineMs = ms
	s.inv.Deadline = time.UnixMilli(ms)
	s.inv.DeadlineErr = nil
}

var errNoRequestID = fmt.Errorf("%w: no %s header", errMalformed, hdrRequestID)

// finish turns the gathered values into strings (one allocation) and checks
// the request ID, without which the invocation cannot be answered.
func (s *nextHeaders) finish() error {
	if len(s.strs) > 0 {
		block := string(s.strs)
		for f := range nFresh {
			if s.seen&(1<<f) == 0 {
				continue
			}
			v := block[s.spans[f].off:s.spans[f].end]
			switch f {
			case fRequestID:
				s.inv.RequestID = v
			case fTraceID:
				s.inv.TraceID = v
			case fInvocationID:
				s.inv.InvocationID = v
			case fClientContext:
				s.inv.ClientContext = v
			case fCognitoIdentity:
				s.inv.CognitoIdentity = v
			}
		}
	}
	if cap(s.strs) > maxRetainedStrs {
		s.strs = nil
	}
	if s.inv.RequestID == "" {
		return errNoRequestID
	}
	if err := checkRequestID(s.inv.RequestID); err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	return nil
}

// errInvalidID is wrapped with ErrInvalid or errMalformed by callers.
var errInvalidID = errors.New("request ID not safe in a URL path")

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

// checkRequestID reports whether id can be put into a URL path as is.
func checkRequestID(id string) error {
	if id == "" || id == "." || id == ".." || len(id) > maxRequestIDLen {
		return fmt.Errorf("%w: %q", errInvalidID, clipString(id))
	}
	for i := 0; i < len(id); i++ {
		if !pathSafe[id[i]] {
			return fmt.Errorf("%w: %q", errInvalidID, clipString(id))
		}
	}
	return nil
}

// pathSafe lists the bytes allowed in a request ID: RFC 3986 pchar without
// '%' (no percent-decoding surprises). So no CR, LF, space, '/', '?', '#'
// or control byte ever reaches the request line.
var pathSafe = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "-._~!$&'()*+,;=:@" {
		t[c] = true
	}
	return t
}()

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
