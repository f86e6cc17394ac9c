package rapitest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Fault is one misbehaviour of the Runtime API, injected into one reply. Its
// zero value injects nothing. A Fault is given by call index
// (Options.Faults) or by invocation (Request.Fault for the /next reply that
// hands it out, Request.PostFault for the reply to the post that ends it).
//
// What it does, by the first field set:
//
//	Status  reply with this status and a JSON error body
//	Raw     write these bytes as the whole reply, then end the connection:
//	        a malformed status line or header, a reply that stops short
//	Cut     write only the first Cut bytes of the normal reply (status line,
//	        headers and body), or for a negative Cut all but its last -Cut
//	        bytes, then end the connection: a reply cut off mid-header or
//	        mid-body (a negative Cut places the cut from the end, which the
//	        caller knows: the payload and the last header lines)
//	Drop    end the connection without a reply
//	Reset   alone: the same, with a TCP reset
//	Stall   alone: wait, then reply normally
//
// A stall that the client ends by leaving ends the connection with no
// reply, and no request pipelined behind it is served.
//
// Reset makes the end of the connection a TCP reset (RST) rather than an
// orderly close, after Raw or Cut bytes too. Stall waits before the reply,
// or, with Raw or Cut, after the bytes written and before the end: a peer
// that stops mid-reply. A stall ends early when the client goes away or the
// server closes; time.Hour is a peer that never answers.
//
// ReadBody reads the request's body to its end (up to MaxResponseBytes+1
// bytes) before a fault that does not serve the request acts. It plays a
// Runtime API that had the whole post, then reset or closed the connection
// without answering it. Without it a Drop or Reset may come while the client
// is still writing.
//
// By call index the fault replaces the request's handling, and the request is
// not served. A faulted /next registers no poll, a faulted post ends no
// invocation. Cut or Stall alone are the exception: they serve the request
// first. So a cut /next hands out an invocation that is then lost. By
// invocation the request is always served first and only its reply is
// replaced. The invocation of a faulted /next reply is handed out, and ends
// by its deadline unless the runtime answers it. A faulted post ends its
// invocation as usual (Invoke gets what the runtime sent), while the runtime
// sees the fault.
type Fault struct {
	Status int
	Raw    []byte
	Cut    int
	Drop   bool
	Reset  bool
	Stall  time.Duration

	ReadBody bool
}

// writes reports whether f writes bytes of its own before ending the
// connection.
func (f *Fault) writes() bool { return f.Raw != nil || f.Cut != 0 }

// serves reports whether f, given by call index, lets the request be
// served: Cut, or Stall alone.
func (f *Fault) serves() bool {
	return f.Status == 0 && f.Raw == nil && (f.Cut != 0 || !f.Drop && !f.Reset)
}

// cutAt is how many bytes of an n-byte reply a Cut lets through.
func (f *Fault) cutAt(n int) int {
	if f.Cut < 0 {
		return max(n+f.Cut, 0)
	}
	return min(f.Cut, n)
}

// carries reports whether the client, given reply and then f, gets the
// request ID line of invocation id whole: without it the runtime cannot
// answer the invocation. A reset may discard what the client had not read.
func (f *Fault) carries(reply []byte, id string) bool {
	line := []byte(hdrRequestID + ": " + id + "\r\n")
	switch {
	case f.Status != 0 || f.Reset:
		return false
	case f.Raw != nil:
		return bytes.Contains(f.Raw, line)
	case f.Cut != 0:
		return bytes.Contains(reply[:f.cutAt(len(reply))], line)
	}
	return !f.Drop
}

// inject answers with f instead of the normal reply, which serve writes to
// the writer it is given (for a Cut, into a recorder).
func (s *Server) inject(w http.ResponseWriter, r *http.Request, f *Fault, serve func(http.ResponseWriter)) {
	s.c.faults.Add(1)
	if f.ReadBody && !f.serves() {
		_, _ = io.CopyN(io.Discard, r.Body, int64(s.opts.MaxResponseBytes)+1)
	}
	if !f.writes() && f.Stall > 0 {
		s.stall(r.Context().Done(), f.Stall)
		if r.Context().Err() != nil {
			// The client left before any reply: as an HTTP/1.1 server
			// that never replied, read nothing more of its connection
			// (a request pipelined behind this one is never served).
			panic(http.ErrAbortHandler)
		}
	}
	switch {
	case f.Status != 0:
		reply(w, f.Status, bodyFault)
	case f.Raw != nil:
		s.writeRaw(w, f, f.Raw)
	case f.Cut != 0:
		rec := newRecorder()
		serve(rec)
		b := rec.bytes()
		if rec.inv != nil && !f.carries(b, rec.inv.id) {
			rec.inv.undelivered.Store(true)
			s.release(rec.inv)
		}
		s.writeRaw(w, f, b[:f.cutAt(len(b))])
	case f.Drop || f.Reset:
		s.writeRaw(w, f, nil)
	default:
		serve(w)
	}
}

// stall waits d, or until done (the client went away) or the server closes.
func (s *Server) stall(done <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	case <-s.closed:
	}
}

// writeRaw takes the connection over, writes b, stalls if asked, and ends
// the connection (with RST for f.Reset).
func (s *Server) writeRaw(w http.ResponseWriter, f *Fault, b []byte) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	nc, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok && f.Reset {
		_ = tc.SetLinger(0) // Close sends RST
	}
	defer nc.Close()
	if len(b) > 0 {
		if _, err := nc.Write(b); err != nil {
			return
		}
	}
	if f.Stall > 0 && f.writes() {
		// A hijacked connection has no request context: watch it for the
		// client going away.
		gone := make(chan struct{})
		go func() {
			defer close(gone)
			_, _ = io.Copy(io.Discard, nc)
		}()
		s.stall(gone, f.Stall)
		_ = nc.Close() // ends the reader
		<-gone
	}
}

// recorder keeps a reply to write it (or part of it) later.
type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
	inv  *invocation // the invocation a /next reply hands out, if any
}

func newRecorder() *recorder { return &recorder{h: http.Header{}} }

func (r *recorder) Header() http.Header { return r.h }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// bytes is the reply as HTTP/1.1 puts it on the wire, with its length.
func (r *recorder) bytes() []byte {
	r.WriteHeader(http.StatusOK)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(r.code) + " " + http.StatusText(r.code) + "\r\n")
	r.h.Set(hdrContentLength, strconv.Itoa(r.body.Len()))
	_ = r.h.Write(&b)
	b.WriteString("\r\n")
	b.Write(r.body.Bytes())
	return b.Bytes()
}

// writeTo replays the reply on w.
func (r *recorder) writeTo(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range r.h {
		h[k] = v
	}
	r.WriteHeader(http.StatusOK)
	w.WriteHeader(r.code)
	_, _ = w.Write(r.body.Bytes())
}
