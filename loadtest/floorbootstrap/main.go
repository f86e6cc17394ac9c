// Command floorbootstrap is the load test's floor, not a runtime: the least
// work that answers the demo contract of cmd/bootstrap/demo, so that a
// report can show how far each runtime is from it. The load test runs it as
// the runtime "floor".
//
// It serves three workloads, byte for byte as the demo answers them: tiny
// (the payload {} answered {"ok":true,"requestId":"ID"}), size:S (the
// payload {"size":N} answered with N bytes of JSON string, built once per
// size and shared) and wait:D (the payload {"sleep_ms":M}: time.Sleep in
// the slot's goroutine, the least a wait costs, then tiny's answer, as a
// handler waiting on a downstream call). Any other payload (mix, grow's
// gather, stack, events) is refused: the process exits with a message
// naming it, so that a figure of the floor is never one of a workload it
// does not do.
//
// Each of the AWS_LAMBDA_MAX_CONCURRENCY slots is one goroutine on one
// keep-alive connection, speaking HTTP/1.1 by hand: GET /next, read the
// headers and the Content-Length body, POST /response with the
// invocation ID echoed, read the reply, poll again. No net/http, no
// handler adapter, no JSON decoding: its cost per invocation is the
// system calls and a few hundred bytes of parsing.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	maxConcurrency = 1600           // LMI's largest AWS_LAMBDA_MAX_CONCURRENCY
	maxPayload     = 1 << 20        // the floor's payloads are a few bytes
	maxSize        = 6 << 20        // the demo's largest body: Lambda's buffered limit
	maxSleepMS     = 15 * 60 * 1000 // Lambda's longest timeout
	// readBuf bounds a header line; the Runtime API's lines are well
	// under it, and 1600 slots keep it small.
	readBuf = 1 << 10
	// inline is the largest body copied behind the headers into one
	// write; larger cached bodies go out with writev, uncopied.
	inline = 64 << 10
)

const (
	hdrRequestID     = "Lambda-Runtime-Aws-Request-Id"
	hdrInvocationID  = "Lambda-Runtime-Invocation-Id"
	hdrContentLength = "Content-Length"
	hdrTransferEnc   = "Transfer-Encoding"
	hdrConnection    = "Connection"
	pathPrefix       = "/2018-06-01/runtime/invocation/"
)

// exit ends the process; a variable so that tests see the refusal.
var exit = func(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "floorbootstrap: "+format+"\n", args...)
	os.Exit(code)
}

func main() {
	api := os.Getenv("AWS_LAMBDA_RUNTIME_API")
	if api == "" {
		exit(1, "AWS_LAMBDA_RUNTIME_API is not set")
	}
	n := concurrency(os.Getenv("AWS_LAMBDA_MAX_CONCURRENCY"))
	next := []byte("GET " + pathPrefix + "next HTTP/1.1\r\nHost: " + api + "\r\n\r\n")
	slots := make([]*slot, n)
	for i := range slots {
		slots[i] = newSlot(api, next)
	}
	connect(slots)
	for _, s := range slots[1:] {
		go s.run()
	}
	slots[0].run()
}

// connect dials every slot from a few goroutines before they poll, as
// lmigo does: a goroutine keeps the stack a dial grew, 16 KiB instead of 8.
func connect(slots []*slot) {
	var wg sync.WaitGroup
	next := make(chan *slot)
	for range min(len(slots), 4) {
		wg.Go(func() {
			for s := range next {
				s.dial()
			}
		})
	}
	for _, s := range slots {
		next <- s
	}
	close(next)
	wg.Wait()
}

// concurrency reads AWS_LAMBDA_MAX_CONCURRENCY: 1 when unset or invalid.
func concurrency(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxConcurrency {
		return 1
	}
	return n
}

// slot is one invocation at a time on one connection. Everything in it is
// its goroutine's own; bodies from the cache are shared and read only.
type slot struct {
	addr, host string
	next       []byte // the /next request, shared
	conn       net.Conn
	r          *bufio.Reader
	closing    bool // the last reply said Connection: close

	payload, out, hdr []byte
	reqID, invID      []byte
	bufs              net.Buffers
	arr               [2][]byte

	size int    // the last size asked for, and its body
	body []byte //
}

func newSlot(addr string, next []byte) *slot {
	return &slot{addr: addr, host: addr, next: next}
}

func (s *slot) run() {
	for {
		if s.conn == nil || s.closing {
			s.dial()
		}
		if err := s.invoke(); err != nil {
			// A dropped connection costs at most this invocation, as it
			// would a runtime: dial again and poll.
			s.drop()
		}
	}
}

func (s *slot) dial() {
	s.drop()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		exit(1, "connect to the Runtime API: %v", err)
	}
	s.conn, s.closing = c, false
	if s.r == nil {
		s.r = bufio.NewReaderSize(c, readBuf)
	} else {
		s.r.Reset(c)
	}
}

func (s *slot) drop() {
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
}

// invoke polls once and answers what it gets.
func (s *slot) invoke() error {
	if _, err := s.conn.Write(s.next); err != nil {
		return err
	}
	status, n, err := s.readHead()
	if err != nil {
		return err
	}
	if status != 200 {
		exit(1, "GET /next answered %d", status)
	}
	if n < 0 || n > maxPayload {
		exit(2, "payload of %d bytes: %s", n, serves)
	}
	if cap(s.payload) < n {
		s.payload = make([]byte, n)
	}
	s.payload = s.payload[:n]
	if _, err := io.ReadFull(s.r, s.payload); err != nil {
		return err
	}
	body := s.answer()
	if err := s.post(body); err != nil {
		return err
	}
	status, n, err = s.readHead()
	if err != nil {
		return err
	}
	if _, err := s.r.Discard(n); err != nil {
		return err
	}
	if status >= 500 {
		exit(1, "POST /response answered %d: the Runtime API is broken", status)
	}
	return nil // 400, 410, 413 end this invocation only
}

// answer is the demo's answer to the payload, or the process exits.
func (s *slot) answer() []byte {
	p := trimSpace(s.payload)
	if string(p) == "{}" {
		s.out = appendTiny(s.out[:0], s.reqID)
		return s.out
	}
	if n, ok := field(p, `{"size":`); ok && n >= 2 && n <= maxSize {
		if n != s.size {
			s.size, s.body = n, cachedBody(n)
		}
		return s.body
	}
	if ms, ok := field(p, `{"sleep_ms":`); ok && ms >= 0 && ms <= maxSleepMS {
		time.Sleep(time.Duration(ms) * time.Millisecond)
		s.out = appendTiny(s.out[:0], s.reqID)
		return s.out
	}
	exit(2, "payload %.80q: %s", p, serves)
	return nil
}

// serves says what the floor serves, for its refusals.
const serves = `the floor serves tiny ({}), size:S ({"size":N}, 2 B to 6 MiB) and wait:D ({"sleep_ms":M}) only`

// field reads p as {"name":N} (prefix is `{"name":`), the one field the
// demo's payload has.
func field(p []byte, prefix string) (int, bool) {
	v, ok := bytes.CutPrefix(p, []byte(prefix))
	if v, ok2 := bytes.CutSuffix(v, []byte("}")); ok && ok2 {
		n, err := strconv.Atoi(string(v))
		return n, err == nil
	}
	return 0, false
}

// appendTiny appends the demo's small answer, {"ok":true,"requestId":ID},
// with ID encoded as encoding/json does.
func appendTiny(b, id []byte) []byte {
	b = append(b, `{"ok":true,"requestId":`...)
	if plain(id) {
		b = append(append(append(b, '"'), id...), '"')
	} else {
		q, _ := json.Marshal(string(id)) // escapes and HTML-safe, as json.Marshal of the Reply
		b = append(b, q...)
	}
	return append(b, '}')
}

// plain says whether json.Marshal writes id as it is, between quotes.
func plain(id []byte) bool {
	for _, c := range id {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// post sends body as the invocation's response.
func (s *slot) post(body []byte) error {
	if !pathSafe(s.reqID) {
		exit(1, "request ID %q cannot be put in a path as it is", s.reqID)
	}
	h := append(s.hdr[:0], "POST "+pathPrefix...)
	h = append(h, s.reqID...)
	h = append(h, "/response HTTP/1.1\r\nHost: "...)
	h = append(h, s.host...)
	h = append(h, "\r\nContent-Length: "...)
	h = strconv.AppendInt(h, int64(len(body)), 10)
	if len(s.invID) > 0 {
		h = append(h, "\r\n"+hdrInvocationID+": "...)
		h = append(h, s.invID...)
	}
	h = append(h, "\r\n\r\n"...)
	if len(body) <= inline {
		h = append(h, body...)
		s.hdr = h
		_, err := s.conn.Write(h)
		return err
	}
	s.hdr = h
	s.arr = [2][]byte{h, body}
	s.bufs = s.arr[:]
	_, err := s.bufs.WriteTo(s.conn)
	s.arr = [2][]byte{}
	return err
}

func pathSafe(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c >= 0x7f || c == '/' || c == '?' || c == '#' || c == '%' {
			return false
		}
	}
	return true
}

// readHead reads a reply's status line and headers: its status, its
// Content-Length and, from /next, the IDs.
func (s *slot) readHead() (status, length int, err error) {
	line, err := s.r.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 || !strings.HasPrefix(string(line), "HTTP/1.") {
		exit(1, "not an HTTP/1.x status line: %.80q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		exit(1, "bad status line: %.80q", line)
	}
	length = -1
	for {
		line, err = s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			exit(1, "header line longer than %d bytes", readBuf)
		}
		if err != nil {
			return 0, 0, err
		}
		line = trimSpace(line)
		if len(line) == 0 {
			break
		}
		i := strings.IndexByte(string(line), ':')
		if i < 0 {
			exit(1, "bad header line: %.80q", line)
		}
		k, v := line[:i], trimSpace(line[i+1:])
		switch {
		case is(k, hdrContentLength):
			if length, err = strconv.Atoi(string(v)); err != nil || length < 0 {
				exit(1, "bad Content-Length %q", v)
			}
		case is(k, hdrRequestID):
			s.reqID = append(s.reqID[:0], v...)
		case is(k, hdrInvocationID):
			s.invID = append(s.invID[:0], v...)
		case is(k, hdrConnection):
			s.closing = strings.EqualFold(string(v), "close")
		case is(k, hdrTransferEnc):
			exit(1, "Transfer-Encoding %q: the floor reads Content-Length bodies only", v)
		}
	}
	if length < 0 {
		length = 0
	}
	return status, length, nil
}

// is compares a header name, in the Runtime API's spelling first.
func is(k []byte, name string) bool {
	return len(k) == len(name) && (string(k) == name || strings.EqualFold(string(k), name))
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// maxCached bounds the cache, as the demo's: a run uses a handful of sizes.
const maxCached = 64

// bodies are the size:S answers, one per size, shared by every slot.
var bodies struct {
	sync.Mutex
	bySize map[int][]byte
}

// cachedBody is exactly n bytes of JSON string, as demo.Body.
func cachedBody(n int) []byte {
	bodies.Lock()
	defer bodies.Unlock()
	if b, ok := bodies.bySize[n]; ok {
		return b
	}
	b := make([]byte, n)
	b[0], b[n-1] = '"', '"'
	for i := 1; i < n-1; i++ {
		b[i] = 'x'
	}
	if bodies.bySize == nil {
		bodies.bySize = map[int][]byte{}
	}
	if len(bodies.bySize) < maxCached {
		bodies.bySize[n] = b
	}
	return b
}
