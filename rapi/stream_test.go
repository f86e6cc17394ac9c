package rapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// readChunked reads a chunked request body into r (see srvReq), reusing
// its slices. It is strict: size lines are bare hex with CRLF, and each
// chunk's data ends with CRLF.
func readChunked(br *bufio.Reader, r *srvReq) bool {
	r.body, r.raw, r.chunks, r.trailer = r.body[:0], r.raw[:0], r.chunks[:0], r.trailer[:0]
	for {
		line, err := br.ReadSlice('\n')
		if err != nil || !bytes.HasSuffix(line, []byte("\r\n")) {
			return false
		}
		r.raw = append(r.raw, line...)
		size, ok := parseHex(line[:len(line)-2])
		if !ok || size > 1<<20 {
			return false
		}
		if size == 0 {
			break
		}
		r.chunks = append(r.chunks, int(size))
		start := len(r.raw)
		n := int(size) + 2
		r.raw = slices.Grow(r.raw, n)[:start+n]
		if _, err := io.ReadFull(br, r.raw[start:]); err != nil || !bytes.HasSuffix(r.raw, []byte("\r\n")) {
			return false
		}
		r.body = append(r.body, r.raw[start:start+int(size)]...)
	}
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		r.raw = append(r.raw, line...)
		if string(line) == "\r\n" {
			return true
		}
		r.trailer = append(r.trailer, line...)
	}
}

// trailerValue is headerValue for the trailers.
func (r *srvReq) trailerValue(name string) []byte {
	t := srvReq{header: r.trailer}
	return t.headerValue(name)
}

// pieces is a body that returns one piece per Read (a piece longer than
// the buffer over several), then err (io.EOF when nil). An empty piece is a
// Read that returns (0, nil).
type pieces struct {
	p   []string
	err error
	i   int
	off int
}

func (r *pieces) Read(b []byte) (int, error) {
	if r.i == len(r.p) {
		if r.err == nil {
			return 0, io.EOF
		}
		return 0, r.err
	}
	n := copy(b, r.p[r.i][r.off:])
	r.off += n
	if r.off == len(r.p[r.i]) {
		r.i, r.off = r.i+1, 0
	}
	return n, nil
}

// errorDoc is an ErrorFunc that records its calls.
type errorDoc struct {
	typ   string
	doc   []byte
	calls int
	err   error
	sent  int64
}

func (e *errorDoc) fn(err error, sent int64) (string, []byte) {
	e.calls++
	e.err, e.sent = err, sent
	return e.typ, e.doc
}

// seenStream is what the scripted server saw of one streamed request.
type seenStream struct {
	line, header, raw, body, trailer string
	chunks                           []int
	chunked                          bool
	ahead                            int
}

// streamServer records every request and answers as apiHandler does.
func streamServer(t *testing.T) (*testServer, func() []seenStream) {
	var (
		mu   sync.Mutex
		seen []seenStream
	)
	next := nextResponse(testRequestID, []byte(`{}`), "")
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		mu.Lock()
		seen = append(seen, seenStream{string(r.line), string(r.header), string(r.raw), string(r.body), string(r.trailer),
			append([]int(nil), r.chunks...), r.chunked, sc.ahead})
		mu.Unlock()
		if r.is("GET", pathNext) {
			sc.bw.Write(next)
		} else {
			sc.bw.Write(accepted)
		}
		return keepOpen
	})
	return srv, func() []seenStream {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenStream(nil), seen...)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestStreamOnTheWire checks the head and the chunk framing byte for byte.
func TestStreamOnTheWire(t *testing.T) {
	big := strings.Repeat("z", streamChunk+10)
	huge := strings.Repeat("h", 1<<20) // the test server's largest chunk
	tests := []struct {
		name   string
		body   io.Reader
		raw    string
		chunks []int
	}{
		{"pieces", &pieces{p: []string{"hello", " world"}}, "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", []int{5, 6}},
		{"empty", &pieces{}, "0\r\n\r\n", nil},
		{"empty reads skipped", &pieces{p: []string{"", "a", "", "", "bc"}}, "1\r\na\r\n2\r\nbc\r\n0\r\n\r\n", []int{1, 2}},
		{"one byte", &pieces{p: []string{"{"}}, "1\r\n{\r\n0\r\n\r\n", []int{1}},
		{"larger than the buffer", &pieces{p: []string{big}}, "8000\r\n" + big[:streamChunk] + "\r\na\r\n" + big[streamChunk:] + "\r\n0\r\n\r\n",
			[]int{streamChunk, 10}},
		// An io.WriterTo writes itself out: one chunk per Write, from its
		// own bytes; strings.Reader's WriteString and bufio.Reader's
		// ReadFrom go through the chunk buffer.
		{"bytes.Reader, one chunk", bytes.NewReader([]byte(huge)), strconv.FormatInt(int64(len(huge)), 16) + "\r\n" + huge + "\r\n0\r\n\r\n", []int{len(huge)}},
		{"bytes.Buffer", bytes.NewBufferString("hello"), "5\r\nhello\r\n0\r\n\r\n", []int{5}},
		{"empty bytes.Reader", bytes.NewReader(nil), "0\r\n\r\n", nil},
		{"strings.Reader", strings.NewReader(big), "8000\r\n" + big[:streamChunk] + "\r\na\r\n" + big[streamChunk:] + "\r\n0\r\n\r\n", []int{streamChunk, 10}},
		{"bufio.Reader", bufio.NewReader(&pieces{p: []string{"hello", " world"}}), "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", []int{5, 6}},
		{"writes", &writerTo{w: []string{"a", "", "bc"}}, "1\r\na\r\n2\r\nbc\r\n0\r\n\r\n", []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := streamServer(t)
			cn := srv.client(t).Conn()
			defer cn.Close()
			var ed errorDoc
			if err := cn.Stream(context.Background(), &Invocation{RequestID: "r-1"}, "text/plain", tt.body, ed.fn, queuePtr(cn)); err != nil {
				t.Fatal(err)
			}
			got := seen()
			if len(got) != 1 || ed.calls != 0 {
				t.Fatalf("seen %+v, onError called %d times", got, ed.calls)
			}
			s := got[0]
			wantHeader := "Host: " + srv.addr() + "\r\nUser-Agent: " + cn.c.pre.afterPath[strings.Index(cn.c.pre.afterPath, "User-Agent: ")+12:] +
				"Content-Type: text/plain\r\n" +
				"Lambda-Runtime-Function-Response-Mode: streaming\r\n" +
				"Transfer-Encoding: chunked\r\n" +
				"Trailer: Lambda-Runtime-Function-Error-Type, Lambda-Runtime-Function-Error-Body\r\n"
			if s.line != "POST /2018-06-01/runtime/invocation/r-1/response HTTP/1.1" || s.header != wantHeader || !s.chunked {
				t.Fatalf("head:\n%q\n%q\nwant\n%q", s.line, s.header, wantHeader)
			}
			if s.raw != tt.raw || !equalInts(s.chunks, tt.chunks) || s.trailer != "" {
				t.Fatalf("body %.200q (chunks %v, trailer %q), want %.200q (%v)", s.raw, s.chunks, s.trailer, tt.raw, tt.chunks)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStreamErrors: a read error after the first byte ends the body with
// the declared trailers; before it, an ordinary /error goes out instead.
func TestStreamErrors(t *testing.T) {
	boom := errors.New("boom")
	long := `{"errorMessage":"` + strings.Repeat("m", MaxStreamErrorBody) + `"}`
	tests := []struct {
		name    string
		body    *pieces
		typ     string
		doc     string
		line    string
		raw     string // the body of a streamed post, or of the /error
		wantTyp string // the error type sent
		sent    int64
	}{
		{"mid-stream", &pieces{p: []string{"part1", "part2"}, err: boom}, "Function.Boom", `{"errorMessage":"boom"}`,
			"/response", "5\r\npart1\r\n5\r\npart2\r\n0\r\nLambda-Runtime-Function-Error-Type: Function.Boom\r\nLambda-Runtime-Function-Error-Body: " +
				b64(`{"errorMessage":"boom"}`) + "\r\n\r\n", "Function.Boom", 10},
		{"document cut", &pieces{p: []string{"x"}, err: boom}, "E", long,
			"/response", "1\r\nx\r\n0\r\nLambda-Runtime-Function-Error-Type: E\r\nLambda-Runtime-Function-Error-Body: " +
				b64(long[:MaxStreamErrorBody]) + "\r\n\r\n", "E", 1},
		{"empty type", &pieces{p: []string{"x"}, err: boom}, "", `{}`,
			"/response", "1\r\nx\r\n0\r\nLambda-Runtime-Function-Error-Type: Runtime.Unknown\r\nLambda-Runtime-Function-Error-Body: " +
				b64(`{}`) + "\r\n\r\n", "Runtime.Unknown", 1},
		{"type with a control byte", &pieces{p: []string{"x"}, err: boom}, "A\r\nB", `{}`,
			"/response", "1\r\nx\r\n0\r\nLambda-Runtime-Function-Error-Type: Runtime.Unknown\r\nLambda-Runtime-Function-Error-Body: " +
				b64(`{}`) + "\r\n\r\n", "Runtime.Unknown", 1},
		{"before the first byte", &pieces{p: []string{"", ""}, err: boom}, "Function.Boom", `{"errorMessage":"boom"}`,
			"/error", `{"errorMessage":"boom"}`, "Function.Boom", 0},
		{"no progress", &pieces{p: make([]string, maxEmptyReads)}, "E", `{}`, "/error", `{}`, "E", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := streamServer(t)
			cn := srv.client(t).Conn()
			defer cn.Close()
			ed := errorDoc{typ: tt.typ, doc: []byte(tt.doc)}
			if err := cn.Stream(context.Background(), &Invocation{RequestID: "r-1"}, "", tt.body, ed.fn, queuePtr(cn)); err != nil {
				t.Fatal(err)
			}
			wantErr := boom
			if tt.name == "no progress" {
				wantErr = io.ErrNoProgress
			}
			if ed.calls != 1 || ed.err != wantErr || ed.sent != tt.sent {
				t.Fatalf("onError: %d calls, err %v, sent %d; want 1, %v, %d", ed.calls, ed.err, ed.sent, wantErr, tt.sent)
			}
			got := seen()
			if len(got) != 1 || got[0].line != "POST /2018-06-01/runtime/invocation/r-1"+tt.line+" HTTP/1.1" {
				t.Fatalf("seen %+v", got)
			}
			s := got[0]
			if tt.line == "/error" {
				if s.chunked || s.body != tt.raw || !strings.Contains(s.header, "Lambda-Runtime-Function-Error-Type: "+tt.wantTyp+"\r\n") {
					t.Fatalf("error post %q, body %q", s.header, s.body)
				}
				return
			}
			if s.raw != tt.raw {
				t.Fatalf("body\n%.300q\nwant\n%.300q", s.raw, tt.raw)
			}
			r := srvReq{trailer: []byte(s.trailer)}
			doc, err := base64.StdEncoding.DecodeString(string(r.trailerValue(hdrErrorBody)))
			if string(r.trailerValue(hdrErrorType)) != tt.wantTyp || err != nil || len(doc) > MaxStreamErrorBody {
				t.Fatalf("trailers %q", s.trailer)
			}
		})
	}
}

// TestStreamQueuedPollKeepAlive: streamed answers, plain and failed, share
// one keep-alive connection with Next; with a queued poll the GET goes out in
// the write that ends the body, and Next only reads its answer.
func TestStreamQueuedPollKeepAlive(t *testing.T) {
	srv, seen := streamServer(t)
	var rec recorder
	var inv Invocation
	cn := queuedConn(t, srv, &inv, rec.option())
	c := cn.c
	ctx := context.Background()
	bodies := []*pieces{
		{p: []string{"a", "bb"}},
		{p: []string{"c"}, err: errors.New("late")},
		{},
		{err: errors.New("early")},
		{p: []string{strings.Repeat("d", 40<<10)}},
	}
	for i, b := range bodies {
		var ed errorDoc
		ed.typ, ed.doc = "E", []byte(`{"errorMessage":"x"}`)
		if err := cn.Stream(ctx, &inv, "", b, ed.fn, queuePtr(cn)); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		before := rec.count()
		if err := cn.Stream(ctx, &inv, "", &pieces{p: []string{"no"}}, ed.fn, queuePtr(cn)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("stream %d with a poll queued: %v", i, err)
		}
		if rec.count() != before {
			t.Fatalf("stream %d wrote with a poll queued", i)
		}
		if w := rec.since(before - 1); len(w) != 1 || !bytes.HasSuffix(w[0], c.pre.next) {
			t.Fatalf("stream %d: last write %q does not end with the GET", i, w)
		}
		queuedNext(t, cn, &inv)
		if rec.count() != before {
			t.Fatalf("Next %d wrote with a poll queued", i)
		}
	}
	if a := srv.accepts.Load(); a != 1 {
		t.Fatalf("accepts = %d, want 1", a)
	}
	got := seen()
	if len(got) != 1+2*len(bodies) {
		t.Fatalf("server saw %d requests", len(got))
	}
	for i, s := range got {
		switch {
		case i%2 == 0 && s.line != lineNext:
			t.Fatalf("request %d: %q, want GET /next", i, s.line)
		case i%2 == 1 && !strings.HasPrefix(s.line, linePost):
			t.Fatalf("request %d: %q, want a POST", i, s.line)
		case i%2 == 1 && s.ahead != len(c.pre.next):
			t.Errorf("request %d: %d bytes behind the POST, want the GET's %d", i, s.ahead, len(c.pre.next))
		}
	}
	if !strings.HasSuffix(got[3].raw, "\r\n\r\n") || got[3].trailer == "" || !strings.HasSuffix(got[7].line, "/error HTTP/1.1") {
		t.Fatalf("the failed streams: %+v %+v", got[3], got[7])
	}
}

// TestStreamStatus: a refusal after the body is a *StatusError and keeps
// the connection; a panic in Read after the first byte cuts the request
// and drops the connection, and the next call redials.
func TestStreamStatus(t *testing.T) {
	var refuse atomic.Bool
	srv := newTestServer(t, func(sc *srvConn, r *srvReq) action {
		if refuse.Load() {
			sc.bw.WriteString("HTTP/1.1 413 Too Large\r\nContent-Length: 2\r\n\r\nno")
		} else {
			sc.bw.Write(accepted)
		}
		return keepOpen
	})
	cn := srv.client(t).Conn()
	defer cn.Close()
	ctx := context.Background()
	var ed errorDoc
	refuse.Store(true)
	err := cn.Stream(ctx, &Invocation{RequestID: "r"}, "", &pieces{p: []string{"x"}}, ed.fn, queuePtr(cn))
	if se := (*StatusError)(nil); !errors.As(err, &se) || !errors.Is(err, errTooLarge) || string(se.Body) != "no" {
		t.Fatalf("err = %v", err)
	}
	refuse.Store(false)
	if err := cn.Stream(ctx, &Invocation{RequestID: "r"}, "", &pieces{p: []string{"y"}}, ed.fn, queuePtr(cn)); err != nil {
		t.Fatal(err)
	}
	if a := srv.accepts.Load(); a != 1 {
		t.Fatalf("accepts = %d, want 1", a)
	}
	func() {
		defer func() {
			if v := recover(); v != "in Read" {
				t.Fatalf("recovered %v", v)
			}
		}()
		_ = cn.Stream(ctx, &Invocation{RequestID: "r"}, "", &panicAfter{}, ed.fn, queuePtr(cn))
	}()
	if err := cn.Stream(ctx, &Invocation{RequestID: "r"}, "", &pieces{p: []string{"z"}}, ed.fn, queuePtr(cn)); err != nil {
		t.Fatal(err)
	}
	if a := srv.accepts.Load(); a != 2 {
		t.Fatalf("accepts = %d, want 2 (the cut request's connection dropped)", a)
	}
	if err := cn.Stream(ctx, &Invocation{RequestID: "bad id"}, "", &pieces{}, ed.fn, queuePtr(cn)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad id: %v", err)
	}
	if err := cn.Stream(ctx, &Invocation{RequestID: "r"}, "", nil, ed.fn, queuePtr(cn)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil body: %v", err)
	}
}

// panicAfter returns one byte, then panics.
type panicAfter struct{ n int }

func (p *panicAfter) Read(b []byte) (int, error) {
	if p.n++; p.n > 1 {
		panic("in Read")
	}
	b[0] = 'x'
	return 1, nil
}

// FuzzStreamFraming streams fuzzed data, cut into fuzzed pieces and maybe
// failing, to Go's net/http request parser (what the emulator's Runtime API
// runs on) over an in-memory connection: the body must arrive whole, the
// trailers must carry the error, and a failure before the first byte must
// be a plain /error.
func FuzzStreamFraming(f *testing.F) {
	f.Add([]byte("hello world"), []byte{5, 0, 6}, false, "Function.E", []byte(`{"errorMessage":"x"}`))
	f.Add([]byte{}, []byte{}, false, "", []byte{})
	f.Add([]byte("abc"), []byte{1, 1, 1}, true, "Runtime.X", []byte(`{}`))
	f.Add([]byte{}, []byte{0}, true, "E", []byte("doc"))
	f.Add(bytes.Repeat([]byte{0xff}, 70000), []byte{255, 255}, true, "", bytes.Repeat([]byte("d"), 3000))
	f.Add([]byte("x"), []byte{}, true, strings.Repeat("\xe9", maxTrailerErrorType), bytes.Repeat([]byte("\x00"), 3000)) // the largest trailers
	f.Fuzz(func(t *testing.T, data, cuts []byte, fail bool, errorType string, doc []byte) {
		if len(cuts) >= maxEmptyReads { // that many empty Reads fail the stream
			cuts = cuts[:maxEmptyReads-1]
		}
		var ps []string
		rest := data
		for _, c := range cuts {
			n := min(int(c)*300, len(rest)) // 0 is an empty Read
			ps = append(ps, string(rest[:n]))
			rest = rest[n:]
		}
		if len(rest) > 0 {
			ps = append(ps, string(rest))
		}
		body := &pieces{p: ps}
		if fail {
			body.err = errors.New("fuzz")
		}
		type seen struct {
			req     *http.Request
			body    []byte
			trailer http.Header
			err     error
		}
		got := make(chan seen, 1)
		c, err := New("127.0.0.1:1", withDialer(func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				br := bufio.NewReader(server)
				req, err := http.ReadRequest(br)
				if err != nil {
					got <- seen{err: err}
					return
				}
				b, err := io.ReadAll(req.Body)
				got <- seen{req: req, body: b, trailer: req.Trailer, err: err}
				if err == nil { // else close: the client may be blocked writing
					_, _ = server.Write(accepted)
				}
			}()
			return client, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		cn := c.Conn()
		defer cn.Close()
		var ed errorDoc
		ed.typ, ed.doc = errorType, doc
		err = cn.Stream(context.Background(), &Invocation{RequestID: "r"}, "", body, ed.fn, queuePtr(cn))
		if err != nil || (ed.calls == 1) != fail {
			t.Fatalf("err %v, onError calls %d", err, ed.calls)
		}
		wantType := errorType
		if errorType == "" || checkHeaderValue(hdrErrorType, errorType, maxTrailerErrorType) != nil {
			wantType = unknownErrorType
		}
		wantType = strings.Trim(wantType, " \t") // as net/http reads it
		s := <-got
		if s.err != nil {
			t.Fatalf("server: %v", s.err)
		}
		if fail && len(data) == 0 { // an ordinary /error
			if s.req.URL.Path != pathInvocation+"r/error" || !bytes.Equal(s.body, doc) || s.req.Header.Get(hdrErrorType) != wantType {
				t.Fatalf("/error: %s %q %q", s.req.URL.Path, s.body, s.req.Header)
			}
			return
		}
		if s.req.URL.Path != pathInvocation+"r/response" || s.req.Header.Get(hdrResponseMode) != modeStreaming ||
			len(s.req.TransferEncoding) != 1 || s.req.TransferEncoding[0] != "chunked" {
			t.Fatalf("head: %s %q %q", s.req.URL.Path, s.req.Header, s.req.TransferEncoding)
		}
		if !bytes.Equal(s.body, data) {
			t.Fatalf("body of %d bytes, want %d", len(s.body), len(data))
		}
		gotType := s.trailer.Get(hdrErrorType)
		gotDoc, derr := base64.StdEncoding.DecodeString(s.trailer.Get(hdrErrorBody))
		if !fail {
			if gotType != "" || len(gotDoc) != 0 {
				t.Fatalf("trailers %q on a stream that did not fail", s.trailer)
			}
			return
		}
		wantDoc := doc
		if len(wantDoc) > MaxStreamErrorBody {
			wantDoc = wantDoc[:MaxStreamErrorBody]
		}
		if gotType != wantType || derr != nil || !bytes.Equal(gotDoc, wantDoc) || ed.sent != int64(len(data)) {
			t.Fatalf("trailers %q (sent %d), want %q and %q", s.trailer, ed.sent, wantType, wantDoc)
		}
	})
}
