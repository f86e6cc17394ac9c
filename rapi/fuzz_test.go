package rapi

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

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
