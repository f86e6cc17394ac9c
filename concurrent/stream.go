package concurrent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/concurrent/internal/errordoc"
	"github.com/lmigo/lmigo/rapi"
)

// Streaming. A handler result that aws-lambda-go sends as the bytes it
// reads is streamed, as aws-lambda-go streams it. Such a result is an
// io.Reader that does not encode as JSON or encodes as {} (see
// writeValue). The reader is read as it is posted, chunked, with the error
// trailers declared. That includes the events package's
// LambdaFunctionURLStreamingResponse and APIGatewayProxyStreamingResponse.
// Every other result is buffered. A stream is read on the slot's
// goroutine, on the slot's own connection, while the handler's context is
// still live. So concurrent streams never wait for each other.
// LMIGO_MAX_RESPONSE_BYTES does not apply: the platform's streaming limits
// do.

// stream answers the invocation in s with body, a reader the handler
// returned, and then closes it if it is an io.Closer. A read error before
// the first byte is posted as an ordinary /error, one after it in the
// stream's trailers; a panic in Read is such an error. s.resp holds the
// error document.
func (s *slot) stream(ctx *invocationContext, contentType string, body io.Reader) {
	rt := s.rt
	inv := &s.inv
	contentType = s.cleanContentType(contentType)
	g := &guardedReader{r: body, rt: rt, c: ctx, s: s}
	var src io.Reader = g
	if wt, ok := body.(io.WriterTo); ok {
		// Written out from its own bytes (rapi.Conn.Stream): a
		// *bytes.Reader is not copied.
		src = &guardedWriterTo{guardedReader: g, wt: wt}
	}
	var (
		failure     error
		failureType string
		early       bool // failure came before the first byte: an /error
	)
	onError := func(err error, sent int64) (string, []byte) {
		failure, early = err, sent == 0
		s.resp.Reset()
		limit := rapi.MaxStreamErrorBody // a trailer
		if early {
			limit = maxErrorBody
		}
		failureType = writeErrorDoc(s.resp, err, limit)
		return headerErrorType(failureType), s.resp.B
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		// runtime.Goexit in Read (a panic is recovered by g). After the
		// first byte rapi dropped the connection, which the Runtime API
		// reports as a truncated response: that ends the invocation.
		err := errors.New("the response reader called runtime.Goexit")
		if g.n == 0 {
			s.fail(errTypeHandlerExited, err)
			return
		}
		s.ended = true
		rt.metrics.failed(nil)
		logFailure(rt.log, inv, errTypeHandlerExited, err)
		s.note(errTypeHandlerExited, nil, int(g.n))
	}()

	// A retry on a fresh connection (send) sends nothing twice that was
	// read. It sends the stream itself when nothing was read yet, and an
	// /error as it was (a repeated one gets a harmless 400). Otherwise it
	// sends an /error of its own in place of the stream, which cannot be
	// read again. The Runtime API refuses that one (400) if it had the
	// stream.
	var (
		last        error
		interrupted error // the stream's connection ended unanswered
	)
	again, err := s.send(func(ctx context.Context) error {
		switch {
		case last == nil || g.reads == 0:
			last = s.conn.Stream(ctx, inv, contentType, src, onError, &g.queue)
		case early:
			last = s.conn.Fail(ctx, inv, headerErrorType(failureType), s.resp.B, nil, s.mayQueue())
		default:
			interrupted = fmt.Errorf("the response stream's connection ended before the Runtime API answered, "+
				"and a stream cannot be sent again: %w", last)
			s.resp.Reset()
			writeErrorDoc(s.resp, messages.InvokeResponse_Error{Message: interrupted.Error(), Type: errTypeStreamInterrupted}, maxErrorBody)
			last = s.conn.Fail(ctx, inv, errTypeStreamInterrupted, s.resp.B, nil, s.mayQueue())
		}
		return last
	})
	returned = true
	s.closeReader(body)
	if failure != nil {
		rt.metrics.failed(failure)
		logFailure(rt.log, inv, failureType, failure)
	}
	if errors.Is(err, rapi.ErrInvalid) && g.reads == 0 {
		s.fail(errTypeUnsendable, fmt.Errorf("the response could not be sent: %w", err))
		return
	}
	// The caller got the interrupted /error if it was accepted: last is its
	// own reply, where err also tells of a cut. A refusal says that the
	// Runtime API had the stream.
	if interrupted != nil && last == nil {
		rt.metrics.failed(nil)
		logFailure(rt.log, inv, errTypeStreamInterrupted, interrupted)
	}
	switch {
	case interrupted != nil && last == nil:
		s.note(errTypeStreamInterrupted, nil, len(s.resp.B))
	case early:
		s.note(failureType, failure, len(s.resp.B))
	default: // failureType is "" unless the stream ended in its trailers
		s.note(failureType, failure, int(g.n))
	}
	s.settle(err, again)
}

// closeReader closes a streamed reader that is an io.Closer, as
// aws-lambda-go does after its post. The answer is out by then: a close
// error changes nothing, a panic is logged and counted.
func (s *slot) closeReader(body io.Reader) {
	rt := s.rt
	c, ok := body.(io.Closer)
	if !ok {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			pe := newPanicError(v)
			rt.metrics.failed(pe)
			logFailure(rt.log, &s.inv, errordoc.TypeName(pe.Value), pe)
		}
	}()
	_ = c.Close()
}

// guardedReader turns a panic in the handler's Read into a *PanicError
// returned by Read, so that it fails the stream, not the process. When the
// reader ends, it waits for the work the invocation fanned out (fanout.go).
// A failure of that work takes the place of io.EOF, and so goes in the
// stream's error trailers.
type guardedReader struct {
	r     io.Reader
	n     int64 // bytes read
	reads int
	rt    *Runtime
	c     *invocationContext // nil: nothing to finish (tests)
	// s is the slot streamed from, nil in tests: ended marks it finished.
	// queue is the stream's queue value (rapi reads it at the end),
	// decided when the body ends.
	s     *slot
	queue bool
}

// decide sets the stream's queue value as the body ends: as late as an
// answer's, so that the overrun watch covers a body that hangs. The slot's
// goroutine leaves the labels then, also on a failure: the answer is
// posted next (end.go).
func (g *guardedReader) decide() {
	if g.s != nil {
		g.s.unlabel()
	}
	g.queue = g.s != nil && g.s.mayQueue()
}

func (g *guardedReader) Read(p []byte) (n int, err error) {
	g.reads++
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, newPanicError(v)
		}
		if n > 0 {
			g.n += int64(n)
		}
		if err != nil {
			g.decide()
		}
	}()
	n, err = g.r.Read(p)
	if errors.Is(err, io.EOF) {
		err = g.ended(err)
	}
	return n, err
}

// ended is err, or the failure of the invocation's fanned-out work once it
// has ended.
func (g *guardedReader) ended(err error) error {
	if g.c == nil || g.s.finished {
		return err
	}
	if ferr := g.s.finishWork(g.c, nil); ferr != nil {
		return ferr
	}
	return err
}

// guardedWriterTo is guardedReader for a reader that writes itself out
// (io.WriterTo): a panic in WriteTo is returned as a *PanicError, and what
// it writes is counted in n. The writer it hands to WriteTo is dead once
// WriteTo returns, however it returns: w writes on the slot's connection,
// which streams other invocations' answers by then.
type guardedWriterTo struct {
	*guardedReader
	wt io.WriterTo
	cw countingWriter
}

func (g *guardedWriterTo) WriteTo(w io.Writer) (n int64, err error) {
	g.reads++
	g.cw.start(w, &g.n)
	defer func() {
		g.cw.end()
		if v := recover(); v != nil {
			n, err = g.n, newPanicError(v)
		}
		g.decide()
	}()
	n, err = g.wt.WriteTo(&g.cw)
	if err == nil {
		err = g.ended(nil)
	}
	return n, err
}

// countingWriter counts what goes through it, and keeps w's WriteString
// and ReadFrom, which spare a copy or an allocation. Once ended, every
// call returns ErrInvocationEnded and never reaches w; the lock orders a
// call from a goroutine the result left behind with end.
type countingWriter struct {
	mu sync.Mutex
	w  io.Writer // nil once ended
	n  *int64
	ur unlockedReader
}

func (c *countingWriter) start(w io.Writer, n *int64) {
	c.mu.Lock()
	c.w, c.n = w, n
	c.mu.Unlock()
}

func (c *countingWriter) end() {
	c.mu.Lock()
	c.w = nil
	c.mu.Unlock()
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return 0, ErrInvocationEnded
	}
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

func (c *countingWriter) WriteString(s string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return 0, ErrInvocationEnded
	}
	n, err := io.WriteString(c.w, s)
	*c.n += int64(n)
	return n, err
}

func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return 0, ErrInvocationEnded
	}
	c.ur = unlockedReader{c: c, r: r}
	var n int64
	var err error
	if rf, ok := c.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(&c.ur)
	} else {
		n, err = io.Copy(struct{ io.Writer }{c.w}, &c.ur)
	}
	*c.n += n
	return n, err
}

// unlockedReader is what countingWriter.ReadFrom reads r through. r's
// Read runs with the lock released, so that r may write to the writer
// itself without a deadlock. What it read is dropped if the writer ended
// meanwhile (ReadFrom on a goroutine the result left behind).
type unlockedReader struct {
	c *countingWriter
	r io.Reader
}

func (u *unlockedReader) Read(p []byte) (n int, err error) {
	u.c.mu.Unlock()
	defer func() {
		u.c.mu.Lock() // a panic in Read too: ReadFrom unlocks it
		if u.c.w == nil {
			n, err = 0, ErrInvocationEnded
		}
	}()
	return u.r.Read(p)
}

// maxDocErrorType bounds the error type inside a trailer's document, so
// that a document with an empty message always fits.
const maxDocErrorType = 256
