package rapi

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// parsed is the outcome of parsing one whole /next response from bytes.
type parsed struct {
	inv  Invocation
	h    head
	err  error // from readHead, sink.finish or the body
	left string
}

// parseNext runs the same steps as Conn.Next over raw bytes.
func parseNext(raw string, bufSize, maxBody int) parsed {
	br := bufio.NewReaderSize(strings.NewReader(raw), bufSize)
	var (
		p     parsed
		spill []byte
		sink  nextHeaders
		in    intern
		b     body
	)
	p.inv.reset()
	sink.start(&p.inv, &in)
	p.h, p.err = readHead(br, &spill, &defaultLimits, &sink)
	if p.err != nil {
		return p
	}
	if p.h.code/100 == 2 {
		if p.err = sink.finish(); p.err != nil {
			return p
		}
	}
	b.init(br, &spill, p.h, &defaultLimits)
	p.inv.Payload, p.err = b.readAll(nil, maxBody)
	rest, _ := io.ReadAll(br)
	p.left = string(rest)
	return p
}

const okHead = "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: id-1\r\nLambda-Runtime-Deadline-Ms: 1700000000123\r\n"

func TestParseOK(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		payload   string
		close     bool
		left      string
		bufSize   int
		checkInv  func(t *testing.T, inv *Invocation)
		wantCode  int
		wantError error
	}{
		{name: "content-length", raw: okHead + "Content-Length: 5\r\n\r\nhello" + "NEXT", payload: "hello", left: "NEXT"},
		{name: "zero length", raw: okHead + "Content-Length: 0\r\n\r\nNEXT", payload: "", left: "NEXT"},
		{name: "leading zeros", raw: okHead + "Content-Length: 005\r\n\r\nhello", payload: "hello"},
		{name: "duplicate equal length", raw: okHead + "Content-Length: 5\r\ncontent-length: 5\r\n\r\nhello", payload: "hello"},
		{name: "chunked", raw: okHead + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nA;ext=\"x\"\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT",
			payload: "abc0123456789", left: "NEXT"},
		{name: "chunked upper hex and BWS", raw: okHead + "Transfer-Encoding: Chunked\r\n\r\n0B \r\nhello world\r\n0\r\n\r\n", payload: "hello world"},
		{name: "chunked empty", raw: okHead + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nNEXT", payload: "", left: "NEXT"},
		{name: "until EOF", raw: okHead + "\r\nall of it", payload: "all of it", close: false},
		{name: "bare LF", raw: "HTTP/1.1 200 OK\nLambda-Runtime-Aws-Request-Id: id-1\nContent-Length: 2\n\nok", payload: "ok"},
		{name: "no reason phrase", raw: "HTTP/1.1 200\r\nLambda-Runtime-Aws-Request-Id: id-1\r\nContent-Length: 2\r\n\r\nok", payload: "ok"},
		{name: "interim 100 skipped", raw: "HTTP/1.1 100 Continue\r\n\r\n" + okHead + "Content-Length: 2\r\n\r\nok", payload: "ok"},
		{name: "connection close", raw: okHead + "Connection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok", payload: "ok", close: true},
		{name: "http/1.0", raw: strings.Replace(okHead, "1.1", "1.0", 1) + "Content-Length: 2\r\n\r\nok", payload: "ok", close: true},
		{name: "http/1.0 keep-alive", raw: strings.Replace(okHead, "1.1", "1.0", 1) + "Connection: keep-alive\r\nContent-Length: 2\r\n\r\nok", payload: "ok"},
		{name: "204 has no body", raw: "HTTP/1.1 204 No Content\r\nLambda-Runtime-Aws-Request-Id: id-1\r\nContent-Length: 7\r\n\r\nNEXT", payload: "", left: "NEXT", wantCode: 204},
		{name: "long header line past the buffer", bufSize: 256,
			raw:     okHead + "Lambda-Runtime-Client-Context: " + strings.Repeat("c", 3000) + "\r\nContent-Length: 2\r\n\r\nok",
			payload: "ok",
			checkInv: func(t *testing.T, inv *Invocation) {
				if inv.ClientContext != strings.Repeat("c", 3000) {
					t.Errorf("client context %d bytes", len(inv.ClientContext))
				}
			}},
		{name: "all headers, any case, trimmed",
			raw: "HTTP/1.1 200 OK\r\n" +
				"lambda-runtime-aws-request-id:  id-9 \r\n" +
				"LAMBDA-RUNTIME-DEADLINE-MS: 42\r\n" +
				"Lambda-Runtime-Invoked-Function-Arn: arn:x\r\n" +
				"Lambda-Runtime-Trace-Id: Root=1\r\n" +
				"Lambda-Runtime-Client-Context: {\"c\":1}\r\n" +
				"Lambda-Runtime-Cognito-Identity: {\"i\":2}\r\n" +
				"Lambda-Runtime-Aws-Tenant-Id: t-1\r\n" +
				"Lambda-Runtime-Invocation-Id: inv-1\r\n" +
				"content-type: application/json\r\n" +
				"X-Other: ignored\r\n" +
				"Content-Length: 2\r\n\r\n{}",
			payload: "{}",
			checkInv: func(t *testing.T, inv *Invocation) {
				want := Invocation{RequestID: "id-9", DeadlineMs: 42, Deadline: time.UnixMilli(42), FunctionARN: "arn:x",
					TraceID: "Root=1", ClientContext: `{"c":1}`, CognitoIdentity: `{"i":2}`, TenantID: "t-1",
					InvocationID: "inv-1", ContentType: "application/json"}
				got := *inv
				got.Payload = nil
				if !reflect.DeepEqual(got, want) {
					t.Errorf("got  %+v\nwant %+v", got, want)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.bufSize == 0 {
				tt.bufSize = 4096
			}
			p := parseNext(tt.raw, tt.bufSize, 1<<20)
			if p.err != nil {
				t.Fatal(p.err)
			}
			if string(p.inv.Payload) != tt.payload || p.left != tt.left || p.h.close != tt.close {
				t.Fatalf("payload %q left %q close %v", p.inv.Payload, p.left, p.h.close)
			}
			if tt.wantCode != 0 && p.h.code != tt.wantCode {
				t.Fatalf("code %d", p.h.code)
			}
			if tt.checkInv != nil {
				tt.checkInv(t, &p.inv)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	cl := "Content-Length: 2\r\n\r\nok"
	tests := []struct{ name, raw string }{
		{"http/2", "HTTP/2 200 OK\r\n\r\n"},
		{"http/1.x non-digit", "HTTP/1.x 200 OK\r\n\r\n"},
		{"garbage", "ICY 200 OK\r\n\r\n"},
		{"short code", "HTTP/1.1 20 OK\r\n\r\n"},
		{"long code", "HTTP/1.1 2000 OK\r\n\r\n"},
		{"code letters", "HTTP/1.1 2x0 OK\r\n\r\n"},
		{"code 099", "HTTP/1.1 099 X\r\n\r\n"},
		{"code 600", "HTTP/1.1 600 X\r\n\r\n"},
		{"double space", "HTTP/1.1  200 OK\r\n\r\n"},
		{"no space before reason", "HTTP/1.1 200OK\r\n\r\n"},
		{"control in reason", "HTTP/1.1 200 O\x00K\r\n\r\n"},
		{"101", "HTTP/1.1 101 Switching\r\n\r\n"},
		{"header without colon", okHead + "NoColon\r\n" + cl},
		{"header empty name", okHead + ": v\r\n" + cl},
		{"space in name", okHead + "Bad Name: v\r\n" + cl},
		{"space before colon", okHead + "Name : v\r\n" + cl},
		{"obs-fold", okHead + "X: a\r\n  folded\r\n" + cl},
		{"nul in value", okHead + "X: a\x00b\r\n" + cl},
		{"bare CR in value", okHead + "X: a\rb\r\n" + cl},
		{"negative length", okHead + "Content-Length: -1\r\n\r\n"},
		{"plus length", okHead + "Content-Length: +1\r\n\r\nx"},
		{"empty length", okHead + "Content-Length: \r\n\r\n"},
		{"list length", okHead + "Content-Length: 1,1\r\n\r\nx"},
		{"hex length", okHead + "Content-Length: 0x1\r\n\r\nx"},
		{"huge length", okHead + "Content-Length: 9223372036854775808\r\n\r\n"},
		{"conflicting lengths", okHead + "Content-Length: 2\r\nContent-Length: 3\r\n\r\nok"},
		{"gzip", okHead + "Transfer-Encoding: gzip\r\n\r\n"},
		{"gzip, chunked", okHead + "Transfer-Encoding: gzip, chunked\r\n\r\n"},
		{"chunked twice", okHead + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"chunked and length", okHead + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"},
		{"bad chunk size", okHead + "Transfer-Encoding: chunked\r\n\r\nzz\r\n"},
		{"empty chunk size", okHead + "Transfer-Encoding: chunked\r\n\r\n\r\n"},
		{"signed chunk size", okHead + "Transfer-Encoding: chunked\r\n\r\n-1\r\n"},
		{"chunk size overflow", okHead + "Transfer-Encoding: chunked\r\n\r\n1000000000000000\r\n"},
		{"chunk data too long", okHead + "Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n"},
		{"bad trailer", okHead + "Transfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n"},
		{"missing request id", "HTTP/1.1 200 OK\r\n" + cl},
		{"empty request id", "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: \r\n" + cl},
		{"unsafe request id", "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: a/../b\r\n" + cl},
		{"request id with space", "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: a b\r\n" + cl},
		{"repeated request id", okHead + "Lambda-Runtime-Aws-Request-Id: id-2\r\n" + cl},
		{"repeated arn", okHead + "Lambda-Runtime-Invoked-Function-Arn: a\r\nLambda-Runtime-Invoked-Function-Arn: a\r\n" + cl},
		{"too many headers", okHead + strings.Repeat("X: y\r\n", maxHeaderCount) + cl},
		{"head too large", okHead + "X: " + strings.Repeat("a", maxHeadBytes) + "\r\n" + cl},
		{"too many interim", strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", maxInterim+1) + okHead + cl},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parseNext(tt.raw, 512, 1<<20)
			if !errors.Is(p.err, errMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", p.err)
			}
		})
	}
}

func TestParseTruncated(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want error
	}{
		{"nothing", "", io.EOF},
		{"mid status line", "HTTP/1.1 20", io.ErrUnexpectedEOF},
		{"mid headers", okHead + "Content-Le", io.ErrUnexpectedEOF},
		{"before blank line", okHead, io.EOF}, // a whole line then EOF
		{"mid body", okHead + "Content-Length: 10\r\n\r\nabc", io.ErrUnexpectedEOF},
		{"mid chunk", okHead + "Transfer-Encoding: chunked\r\n\r\n5\r\nab", io.ErrUnexpectedEOF},
		{"no last chunk", okHead + "Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parseNext(tt.raw, 512, 1<<20)
			if !errors.Is(p.err, tt.want) || errors.Is(p.err, errMalformed) {
				t.Fatalf("err = %v, want %v", p.err, tt.want)
			}
		})
	}
}

func TestParseBodyTooLarge(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"length", okHead + "Content-Length: 11\r\n\r\nhello world"},
		{"length huge, nothing allocated", okHead + "Content-Length: 999999999999999999\r\n\r\n"},
		{"chunked", okHead + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"},
		{"chunked huge chunk", okHead + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\nhello"},
		{"until EOF", okHead + "\r\nhello world"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parseNext(tt.raw, 512, 10)
			if p.err != errBodyTooLarge {
				t.Fatalf("err = %v", p.err)
			}
			if p.inv.RequestID != "id-1" || cap(p.inv.Payload) > 16 { // limit+1, rounded to a size class
				t.Fatalf("id %q cap %d", p.inv.RequestID, cap(p.inv.Payload))
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	tests := []struct {
		name, header string
		ok           bool
		ms           int64
	}{
		{"valid", "Lambda-Runtime-Deadline-Ms: 1700000000123\r\n", true, 1700000000123},
		{"missing", "", false, 0},
		{"empty", "Lambda-Runtime-Deadline-Ms: \r\n", false, 0},
		{"garbage", "Lambda-Runtime-Deadline-Ms: soon\r\n", false, 0},
		{"negative", "Lambda-Runtime-Deadline-Ms: -5\r\n", false, 0},
		{"zero", "Lambda-Runtime-Deadline-Ms: 0\r\n", false, 0},
		{"float", "Lambda-Runtime-Deadline-Ms: 1.5\r\n", false, 0},
		{"overflow", "Lambda-Runtime-Deadline-Ms: 99999999999999999999\r\n", false, 0},
		{"last ms in int64 ns", "Lambda-Runtime-Deadline-Ms: 9223372036854\r\n", true, 9223372036854},
		{"past 2262", "Lambda-Runtime-Deadline-Ms: 9223372036855\r\n", false, 0},
		{"far past 2262", "Lambda-Runtime-Deadline-Ms: 999999999999999999\r\n", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: id\r\n" + tt.header + "Content-Length: 0\r\n\r\n"
			p := parseNext(raw, 512, 10)
			if p.err != nil {
				t.Fatal(p.err) // a bad deadline never fails the parse
			}
			inv := p.inv
			if tt.ok {
				// UnixNano is what deadline arithmetic rests on: it must not wrap.
				if inv.DeadlineErr != nil || inv.DeadlineMs != tt.ms || !inv.Deadline.Equal(time.UnixMilli(tt.ms)) ||
					inv.Deadline.UnixNano()/1e6 != tt.ms {
					t.Fatalf("%+v", inv)
				}
				return
			}
			if !errors.Is(inv.DeadlineErr, errMalformed) || !inv.Deadline.IsZero() || inv.DeadlineMs != 0 {
				t.Fatalf("DeadlineErr %v Deadline %v ms %d", inv.DeadlineErr, inv.Deadline, inv.DeadlineMs)
			}
			if _, v, ok := strings.Cut(strings.TrimSpace(tt.header), ": "); ok && v != "" {
				if msg := inv.DeadlineErr.Error(); !strings.Contains(msg, hdrDeadlineMs) || !strings.Contains(msg, v) {
					t.Fatalf("DeadlineErr %q does not name the header and %q", msg, v)
				}
			}
		})
	}
}

func TestContentLength(t *testing.T) {
	tests := []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"007", 7, true},
		{"999999999999999999", 999999999999999999, true},
		{"1000000000000000000", 0, false}, {"", 0, false}, {"-1", 0, false}, {"+1", 0, false},
		{" 1", 0, false}, {"1 ", 0, false}, {"1,2", 0, false}, {"0x10", 0, false}, {"１", 0, false},
	}
	for _, tt := range tests {
		n, ok := parseDecimal([]byte(tt.in))
		if n != tt.n || ok != tt.ok {
			t.Errorf("%q: got %d %v", tt.in, n, ok)
		}
	}
}

// endless yields prefix, then filler forever, counting what it hands out.
type endless struct {
	prefix string
	filler byte
	n      int
}

func (e *endless) Read(p []byte) (int, error) {
	k := copy(p, e.prefix)
	e.prefix = e.prefix[k:]
	for i := k; i < len(p); i++ {
		p[i] = e.filler
	}
	e.n += len(p)
	return len(p), nil
}

func TestHeadCapBoundsReading(t *testing.T) {
	for _, tt := range []struct {
		name   string
		prefix string
		filler byte
	}{
		{"one endless line", "HTTP/1.1 200 OK\r\nX: ", 'a'},
		{"endless status line", "HTTP/1.1 200 ", 'a'},
		{"endless short lines", "HTTP/1.1 200 OK\r\n", '\n'}, // bare LF: empty line ends head quickly
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &endless{prefix: tt.prefix, filler: tt.filler}
			br := bufio.NewReaderSize(src, 4096)
			var spill []byte
			_, err := readHead(br, &spill, &defaultLimits, nil)
			if tt.filler == '\n' {
				return // terminates normally; only checking it does not hang
			}
			if !errors.Is(err, errMalformed) {
				t.Fatalf("err = %v", err)
			}
			if src.n > maxHeadBytes+2*4096 || cap(spill) > maxSpillKept {
				t.Fatalf("read %d bytes, spill cap %d", src.n, cap(spill))
			}
		})
	}
}

func TestFramingCapBoundsReading(t *testing.T) {
	// Endless chunk extensions: bounded by the framing budget.
	src := &endless{prefix: okHead + "Transfer-Encoding: chunked\r\n\r\n1;", filler: 'e'}
	br := bufio.NewReaderSize(src, 4096)
	var spill []byte
	var sink nextHeaders
	var inv Invocation
	sink.start(&inv, &intern{})
	h, err := readHead(br, &spill, &defaultLimits, &sink)
	if err != nil {
		t.Fatal(err)
	}
	var b body
	b.init(br, &spill, h, &defaultLimits)
	_, err = b.readAll(nil, 1<<20)
	if !errors.Is(err, errMalformed) {
		t.Fatalf("err = %v", err)
	}
	if src.n > maxHeadBytes+maxFraming+2*4096 {
		t.Fatalf("read %d bytes", src.n)
	}
}

func TestFramingBounds(t *testing.T) {
	const chunked = okHead + "Transfer-Encoding: chunked\r\n\r\n"
	long := strings.Repeat("e", maxFraming)
	trailer := "X-T: " + strings.Repeat("t", 1000) + "\r\n"
	tests := []struct {
		name, raw string
		ok        bool
	}{
		{"one-byte chunks", chunked + strings.Repeat("1\r\nx\r\n", 3*maxFraming/6) + "0\r\n\r\n", true},
		{"long extension on each chunk", chunked + strings.Repeat("1;"+long[:maxFraming-5]+"\r\nx\r\n", 3) + "0\r\n\r\n", true},
		{"chunk line too long", chunked + "1;" + long + "\r\nx\r\n0\r\n\r\n", false},
		{"last chunk line too long", chunked + "1\r\nx\r\n0;" + long + "\r\n\r\n", false},
		{"trailers within bound", chunked + "0\r\n" + strings.Repeat(trailer, maxFraming/len(trailer)) + "\r\n", true},
		{"trailers too long", chunked + "0\r\n" + strings.Repeat(trailer, maxFraming/len(trailer)+1) + "\r\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := defaultLimits
			lim.headers = 1 << 10 // the field count is not under test
			br := bufio.NewReaderSize(strings.NewReader(tt.raw), 4096)
			var (
				spill []byte
				sink  nextHeaders
				inv   Invocation
				b     body
			)
			sink.start(&inv, &intern{})
			h, err := readHead(br, &spill, &lim, &sink)
			if err != nil {
				t.Fatal(err)
			}
			b.init(br, &spill, h, &lim)
			_, err = b.readAll(nil, 1<<20)
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, errMalformed) || !strings.Contains(err.Error(), "chunk framing") {
				t.Fatalf("err = %v, want the framing bound", err)
			}
		})
	}
}

func TestStatusErrorIs(t *testing.T) {
	tests := []struct {
		code int
		want error
	}{
		{400, errBadRequest}, {403, errForbidden}, {410, errGone}, {413, errTooLarge},
		{500, ErrRuntimeAPI}, {502, ErrRuntimeAPI}, {599, ErrRuntimeAPI}, {404, nil}, {302, nil},
	}
	all := []error{errBadRequest, errForbidden, errGone, errTooLarge, ErrRuntimeAPI, ErrTransport, errMalformed}
	for _, tt := range tests {
		err := error(&StatusError{Op: "next", Code: tt.code, Body: []byte("b")})
		for _, s := range all {
			if errors.Is(err, s) != (s == tt.want) {
				t.Errorf("%d: Is(%v) = %v", tt.code, s, s != tt.want)
			}
		}
		if !strings.Contains(err.Error(), "status") {
			t.Error(err.Error())
		}
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzParseResponse feeds arbitrary bytes as a /next response through the
// parser with small caps: it must never panic, never hand out more than the
// body cap, and never read past what the caps allow.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{
		okHead + "Content-Length: 5\r\n\r\nhello",
		okHead + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n",
		okHead + "\r\nuntil eof",
		"HTTP/1.1 100 Continue\r\n\r\n" + okHead + "Content-Length: 0\r\n\r\n",
		"HTTP/1.1 410 Gone\r\nContent-Length: 3\r\n\r\nbye",
		"HTTP/1.0 200 OK\nLambda-Runtime-Aws-Request-Id: x\nConnection: keep-alive\n\n",
		okHead + "Content-Length: 99999\r\n\r\nshort",
		okHead + "Transfer-Encoding: chunked\r\n\r\nfff;x=y\r\nab",
		"",
		"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 2000),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := limits{head: 1024, headers: 16, framing: 512}
		const (
			bufSize = 64
			maxBody = 256
			discard = 512
		)
		src := &countingReader{r: bytes.NewReader(data)}
		br := bufio.NewReaderSize(src, bufSize)
		var (
			inv   Invocation
			spill []byte
			sink  nextHeaders
			in    intern
			b     body
		)
		inv.reset()
		sink.start(&inv, &in)
		h, err := readHead(br, &spill, &lim, &sink)
		if err == nil {
			if h.code < 200 || h.code > 599 {
				t.Fatalf("final code %d", h.code)
			}
			if h.code/100 == 2 {
				if ferr := sink.finish(); ferr == nil {
					if checkRequestID(inv.RequestID) != nil {
						t.Fatalf("unsafe request ID %q accepted", inv.RequestID)
					}
				} else if !errors.Is(ferr, errMalformed) {
					t.Fatalf("finish: %v", ferr)
				}
			}
			b.init(br, &spill, h, &lim)
			p, err := b.readAll(nil, maxBody)
			if len(p) > maxBody+1 || cap(p) > 2*(maxBody+1) {
				t.Fatalf("payload len %d cap %d over cap", len(p), cap(p))
			}
			if err == errBodyTooLarge {
				b.discard(discard)
			} else if err == nil && len(p) > maxBody {
				t.Fatalf("payload of %d bytes returned without error", len(p))
			}
		}
		// Every chunk but the last carries a payload byte: one size line and
		// one CRLF per byte at most, then the trailers.
		chunks := maxBody + 1 + discard + 2
		if bound := lim.head + chunks*(lim.framing+2) + lim.framing + maxBody + 1 + discard + bufSize; src.n > bound {
			t.Fatalf("read %d bytes, bound %d", src.n, bound)
		}
		if cap(spill) > maxSpillKept {
			t.Fatalf("spill kept %d", cap(spill))
		}
	})
}

// FuzzContentLength checks the strict decimal parser against strconv.
func FuzzContentLength(f *testing.F) {
	for _, s := range []string{"0", "42", "007", "-1", "+1", " 1", "1 ", "", "999999999999999999", "1000000000000000000", "9223372036854775808", "0x1", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseDecimal([]byte(s))
		digits := s != "" && strings.Trim(s, "0123456789") == ""
		if ok != (digits && len(s) <= 18) {
			t.Fatalf("%q: ok = %v", s, ok)
		}
		if !ok {
			return
		}
		want, err := strconv.ParseUint(s, 10, 63)
		if err != nil || int64(want) != n || n < 0 {
			t.Fatalf("%q: got %d, strconv %d %v", s, n, want, err)
		}
	})
}

// lastNano is the latest time whose Unix nanoseconds fit in int64.
var lastNano = time.Unix(0, math.MaxInt64)

// FuzzInvocationHeaders puts arbitrary values into the invocation headers
// and checks what Next would hand out.
func FuzzInvocationHeaders(f *testing.F) {
	f.Add(testRequestID, testDeadline, testARN, testTrace, "tenant", `{"a":1}`)
	f.Add("a/b", "-1", "", "", "", "")
	f.Add(" id ", "0012", "arn\t", "t", "", "")
	f.Add("id\r\nLambda-Runtime-Aws-Request-Id: x", "1e3", "a", "b", "c", "d")
	f.Add("id", "9223372036854", "a", "b", "", "") // the last millisecond whose nanoseconds fit in int64
	f.Add("id", "9223372036855", "a", "b", "", "") // the first past it, in 2262
	f.Fuzz(func(t *testing.T, id, deadline, arn, trace, tenant, cc string) {
		raw := "HTTP/1.1 200 OK\r\n" +
			hdrRequestID + ": " + id + "\r\n" +
			hdrDeadlineMs + ": " + deadline + "\r\n" +
			hdrFunctionARN + ": " + arn + "\r\n" +
			hdrTraceID + ": " + trace + "\r\n" +
			hdrTenantID + ": " + tenant + "\r\n" +
			hdrClientContext + ": " + cc + "\r\n" +
			"Content-Length: 0\r\n\r\n"
		p := parseNext(raw, 256, 16)
		if p.err == nil && checkRequestID(p.inv.RequestID) != nil {
			t.Fatalf("unsafe request ID %q accepted", p.inv.RequestID)
		}
		for _, v := range []string{id, deadline, arn, trace, tenant, cc} {
			if !headerSafe([]byte(v)) {
				return // injected framing: only the invariant above holds
			}
		}
		if p.err != nil && !errors.Is(p.err, errMalformed) {
			t.Fatalf("err = %v", p.err)
		}
		trim := func(s string) string { return strings.Trim(s, " \t") }
		if wantOK := checkRequestID(trim(id)) == nil; (p.err == nil) != wantOK {
			t.Fatalf("id %q: err = %v", id, p.err)
		}
		if p.err != nil {
			return
		}
		inv := p.inv
		if inv.RequestID != trim(id) || inv.FunctionARN != trim(arn) || inv.TraceID != trim(trace) ||
			inv.TenantID != trim(tenant) || inv.ClientContext != trim(cc) {
			t.Fatalf("fields differ: %+v", inv)
		}
		if inv.DeadlineErr == nil {
			// Past lastNano, UnixNano wraps and a deadline would read as 1677.
			if inv.Deadline.UnixMilli() != inv.DeadlineMs || time.Until(inv.Deadline) > time.Until(lastNano) {
				t.Fatalf("deadline %q: %v (%d ms) past %v", deadline, inv.Deadline, inv.DeadlineMs, lastNano)
			}
		}
		ms, ok := parseDecimal([]byte(trim(deadline)))
		if ok && ms > 0 && ms <= maxDeadlineMs {
			if inv.DeadlineErr != nil || inv.DeadlineMs != ms || !inv.Deadline.Equal(time.UnixMilli(ms)) {
				t.Fatalf("deadline %q: %+v", deadline, inv)
			}
		} else if !errors.Is(inv.DeadlineErr, errMalformed) || !inv.Deadline.IsZero() {
			t.Fatalf("deadline %q accepted: %+v", deadline, inv)
		}
	})
}
