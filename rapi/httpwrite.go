package rapi

import (
	"fmt"
	"strconv"
)

// The HTTP/1.1 requests a Conn writes, built by hand into its scratch around
// a body that is not copied, and written (write), with a poll queued behind
// when the caller says so. conn.go posts them.

// Paths of the Runtime API, version 2018-06-01.
const (
	pathInvocation = "/2018-06-01/runtime/invocation/"
	pathNext       = pathInvocation + "next"
	pathInitError  = "/2018-06-01/runtime/init/error"
	suffixResponse = "/response"
	suffixError    = "/error"
	contentJSON    = "application/json"
)

// Bounds on what a request may carry in its header, so that the scratch
// buffer of a Conn stays small.
const (
	maxRequestIDLen   = 512
	maxHeaderValueLen = 8 << 10
	maxXRayCauseLen   = 1<<20 - 1 // the Runtime API accepts under 1 MiB
)

// prefixes holds the byte strings of every request that do not depend on the
// invocation, built once by New.
type prefixes struct {
	next      []byte // the whole GET /next request
	postInv   string // "POST /2018-06-01/runtime/invocation/"
	postInit  string // "POST /2018-06-01/runtime/init/error"
	afterPath string // " HTTP/1.1\r\nHost: ...\r\nUser-Agent: ...\r\n"
}

func newPrefixes(host, userAgent string) *prefixes {
	after := " HTTP/1.1\r\n" + hdrHost + ": " + host + "\r\n" + hdrUserAgent + ": " + userAgent + "\r\n"
	return &prefixes{
		next:      []byte("GET " + pathNext + after + "\r\n"),
		postInv:   "POST " + pathInvocation,
		postInit:  "POST " + pathInitError,
		afterPath: after,
	}
}

// request is a POST ready to write: head[:split] + mid + head[split:] + body.
// mid (a large header value) and body are the caller's slices, never copied
// into head. So the scratch stays small whatever their size.
type request struct {
	head  []byte
	split int
	mid   []byte
	body  []byte
}

// buildResponse prepares POST .../invocation/{id}/response. An empty
// contentType sends no Content-Type header.
func buildResponse(r *request, p *prefixes, inv *Invocation, contentType string, body []byte) error {
	h, err := responseHead(r, p, inv, contentType)
	if err != nil {
		return err
	}
	r.finish(h, body)
	return nil
}

// responseHead starts POST .../invocation/{id}/response in r.head, up to and
// including the Content-Type header; buffered and streamed responses share it.
func responseHead(r *request, p *prefixes, inv *Invocation, contentType string) ([]byte, error) {
	if err := checkTarget(inv); err != nil {
		return nil, err
	}
	if err := checkHeaderValue(hdrContentType, contentType, maxHeaderValueLen); err != nil {
		return nil, err
	}
	h := appendTarget(r.head[:0], p, inv, suffixResponse)
	if contentType != "" {
		h = appendHeader(h, hdrContentType, contentType)
	}
	return h, nil
}

// buildError prepares POST .../invocation/{id}/error. xrayCause is sent as a
// header only when it is non-empty, under 1 MiB and header-safe. It is an
// optional diagnostic: dropping it is better than losing the report.
func buildError(r *request, p *prefixes, inv *Invocation, errorType string, body, xrayCause []byte) error {
	if err := checkTarget(inv); err != nil {
		return err
	}
	if err := checkHeaderValue(hdrErrorType, errorType, maxHeaderValueLen); err != nil {
		return err
	}
	h := appendTarget(r.head[:0], p, inv, suffixError)
	h = appendErrorHeaders(h, errorType)
	if len(xrayCause) > 0 && len(xrayCause) <= maxXRayCauseLen && headerSafe(xrayCause) {
		h = append(h, hdrXRayErrorCause+": "...)
		r.split = len(h)
		r.mid = xrayCause
		h = append(h, "\r\n"...)
		r.head = h
		r.finishKeep(body)
		return nil
	}
	r.finish(h, body)
	return nil
}

// checkTarget checks what an answer takes from its invocation: a request ID
// safe in a URL path and an invocation ID safe in a header.
func checkTarget(inv *Invocation) error {
	if inv == nil {
		return fmt.Errorf("%w: nil Invocation", ErrInvalid)
	}
	if err := checkRequestID(inv.RequestID); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// Next read it from a header: whatever fits the head is echoed.
	return checkHeaderValue(hdrInvocationID, inv.InvocationID, maxHeadBytes)
}

// appendTarget appends the request line and fixed headers of an answer to
// inv, and the echo of its invocation ID when it has one.
func appendTarget(h []byte, p *prefixes, inv *Invocation, suffix string) []byte {
	h = append(h, p.postInv...)
	h = append(h, inv.RequestID...)
	h = append(h, suffix...)
	h = append(h, p.afterPath...)
	if inv.InvocationID != "" {
		h = appendHeader(h, hdrInvocationID, inv.InvocationID)
	}
	return h
}

// buildInitError prepares POST /runtime/init/error.
func buildInitError(r *request, p *prefixes, errorType string, body []byte) error {
	if err := checkHeaderValue(hdrErrorType, errorType, maxHeaderValueLen); err != nil {
		return err
	}
	h := append(r.head[:0], p.postInit...)
	h = append(h, p.afterPath...)
	h = appendErrorHeaders(h, errorType)
	r.finish(h, body)
	return nil
}

func appendErrorHeaders(h []byte, errorType string) []byte {
	if errorType != "" {
		h = appendHeader(h, hdrErrorType, errorType)
	}
	return appendHeader(h, hdrContentType, contentJSON)
}

func appendHeader(h []byte, name, value string) []byte {
	h = append(h, name...)
	h = append(h, ": "...)
	h = append(h, value...)
	return append(h, "\r\n"...)
}

// finish ends the header with Content-Length and records body.
func (r *request) finish(h []byte, body []byte) {
	r.head = h
	r.split = len(h)
	r.mid = nil
	r.finishKeep(body)
}

// finishHead ends the header without Content-Length and records no body: a
// GET, or a chunked body that the caller writes itself.
func (r *request) finishHead(h []byte) {
	r.head = append(h, "\r\n"...)
	r.split, r.mid, r.body = len(r.head), nil, nil
}

func (r *request) finishKeep(body []byte) {
	h := append(r.head, hdrContentLength+": "...)
	h = strconv.AppendInt(h, int64(len(body)), 10)
	r.head = append(h, "\r\n\r\n"...)
	r.body = body
}

// checkHeaderValue refuses values that would break the request framing.
func checkHeaderValue(name, v string, max int) error {
	if len(v) > max {
		return fmt.Errorf("%w: %s value of %d bytes exceeds %d", ErrInvalid, name, len(v), max)
	}
	if !ValidHeaderValue(v, max) {
		return fmt.Errorf("%w: %s value %q has a control byte", ErrInvalid, name, clipString(v))
	}
	return nil
}

// write sends r, followed by GET /next when next is set, with one write
// when small, else with writev (net.Buffers), without copying the body.
// r is left as a request that writes the same bytes again, without the GET.
func (c *Conn) write(r *request, next bool) error {
	var tail []byte
	if next {
		tail = c.c.pre.next
	}
	if r.mid == nil && len(r.head)+len(r.body)+len(tail) <= coalesceMax {
		r.head = append(r.head, r.body...)
		n := len(r.head)
		r.head = append(r.head, tail...)
		_, err := c.nc.Write(r.head)
		r.head, r.body = r.head[:n], nil // the body is in head now
		return err
	}
	c.bufs = append(c.parts[:0], r.head[:r.split], r.mid, r.head[r.split:], r.body)
	if next {
		c.bufs = append(c.bufs, tail) // parts has room: no allocation
	}
	_, err := c.bufs.WriteTo(c.nc)
	c.parts = [5][]byte{}
	return err
}
