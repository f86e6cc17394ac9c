package oteltrace

import (
	"context"
	"errors"
	"io"

	"go.opentelemetry.io/otel/trace"
)

var (
	errStreamCut = errors.New("the stream was closed before its end")
	errGoexit    = errors.New("the response reader called runtime.Goexit")
)

// spanReader is a streamed answer whose span ends with it: at the end of
// its bytes, at a read error, or when it is closed first. It keeps the
// wrapped reader's way out: with an io.WriterTo it is one
// (spanWriterTo), so that it is written out as the reader writes itself,
// and without one it is not. It is read by one goroutine, as a stream is.
type spanReader struct {
	r     io.Reader
	h     *Handler
	ctx   context.Context
	span  trace.Span
	ended bool
}

func newSpanReader(h *Handler, ctx context.Context, span trace.Span, r io.Reader) io.ReadCloser {
	s := &spanReader{r: r, h: h, ctx: ctx, span: span}
	if wt, ok := r.(io.WriterTo); ok {
		return &spanWriterTo{spanReader: s, wt: wt}
	}
	return s
}

func (s *spanReader) Read(p []byte) (n int, err error) {
	returned := false
	defer s.endUnlessReturned(&returned)
	n, err = s.r.Read(p)
	returned = true
	if err != nil {
		s.end(err)
	}
	return n, err
}

// Close closes the wrapped reader, if it is an io.Closer, and ends the
// span if the stream has not ended.
func (s *spanReader) Close() error {
	s.end(errStreamCut)
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// end ends the span once; io.EOF is the stream's end, not an error.
func (s *spanReader) end(err error) {
	if s.ended {
		return
	}
	s.ended = true
	if errors.Is(err, io.EOF) {
		err = nil
	}
	s.h.end(s.ctx, s.span, err)
}

// endUnlessReturned, deferred, ends the span when the read did not
// return: a panic, which goes on to the runtime, or runtime.Goexit.
func (s *spanReader) endUnlessReturned(returned *bool) {
	if *returned {
		return
	}
	if v := recover(); v != nil {
		if !s.ended {
			s.ended = true
			endPanicked(s.span, v)
		}
		panic(v) // the runtime fails the stream with it
	}
	s.end(errGoexit)
}

type spanWriterTo struct {
	*spanReader
	wt io.WriterTo
}

func (s *spanWriterTo) WriteTo(w io.Writer) (n int64, err error) {
	returned := false
	defer s.endUnlessReturned(&returned)
	n, err = s.wt.WriteTo(w)
	returned = true
	s.end(err) // nil: all written
	return n, err
}
