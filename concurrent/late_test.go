package concurrent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// lateUse stages a goroutine that outlives its invocation: keep starts it
// with what it kept, and it uses it only once the next invocation's
// handler has begun (next), which answers only after the late use ended.
// Channels, not time, order the two.
type lateUse struct {
	began  chan struct{}
	done   chan lateResult
	result chan lateResult // to the test, once the next invocation saw it
}

// lateResult is what the late use returned, or the panic it raised.
type lateResult struct {
	n        int
	err      error
	panicked any
}

func newLateUse() *lateUse {
	return &lateUse{began: make(chan struct{}), done: make(chan lateResult, 1), result: make(chan lateResult, 1)}
}

func (l *lateUse) keep(use func() (int, error)) {
	go func() {
		<-l.began
		var r lateResult
		defer func() {
			r.panicked = recover() // a crash of the test binary would hide the rest
			l.done <- r
		}()
		r.n, r.err = use()
	}()
}

// next lets the late use run and waits until it is over.
func (l *lateUse) next() {
	close(l.began)
	l.result <- <-l.done
}

// check fails t unless the late use got wantErr without panicking.
func (l *lateUse) check(t *testing.T, wantErr error) {
	t.Helper()
	r := <-l.result
	if r.panicked != nil {
		t.Errorf("the late use panicked: %v", r.panicked)
	}
	if wantErr != nil && (r.n != 0 || !errors.Is(r.err, wantErr)) {
		t.Errorf("late Write = %d, %v; want 0, %v", r.n, r.err, wantErr)
	}
}

// lateWriterTo is a streamed result: "A" and "A!" (which then panics)
// keep the writer their WriteTo was given, "B" lets that writer be used,
// then writes.
type lateWriterTo struct {
	name string
	late *lateUse
}

func (lateWriterTo) Read([]byte) (int, error) { panic("written out, not read") }

func (b lateWriterTo) WriteTo(w io.Writer) (int64, error) {
	switch b.name {
	case "A", "A!":
		b.late.keep(func() (int, error) { return writeEveryWay(w, "LATE-FROM-A") })
		if b.name == "A!" {
			panic("A ends")
		}
	default:
		b.late.next()
	}
	n, err := io.WriteString(w, b.name)
	return int64(n), err
}

// writeEveryWay writes s to w through Write, WriteString and ReadFrom
// (if w has it) and returns the bytes written and Write's error, or an
// error saying how the others' differed from it.
func writeEveryWay(w io.Writer, s string) (int, error) {
	n, err := w.Write([]byte(s))
	k, err2 := io.WriteString(w, s)
	n += k
	errs := []error{err2}
	if rf, ok := w.(io.ReaderFrom); ok {
		k, err3 := rf.ReadFrom(strings.NewReader(s))
		n += int(k)
		errs = append(errs, err3)
	}
	for _, e := range errs {
		if !errors.Is(e, err) {
			return n, fmt.Errorf("write: %v, then %v", err, e)
		}
	}
	return n, err
}

// TestLateStreamWriter: at N=1 a streamed io.WriterTo that keeps its
// writer, and returns or panics, gets ErrInvocationEnded when it writes
// once the next stream on the slot has begun; that stream carries only
// its own bytes.
func TestLateStreamWriter(t *testing.T) {
	for _, a := range []string{"A", "A!"} {
		t.Run(a, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			late := newLateUse()
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(_ context.Context, name string) (io.Reader, error) {
				return lateWriterTo{name: name, late: late}, nil
			})
			if r := invoke(t, api, fmt.Sprintf("%q", a)); (a == "A") != (r.Err == nil) {
				t.Errorf("%s answered %q, err %+v", a, r.Body, r.Err)
			}
			r := invoke(t, api, `"B"`)
			if r.Err != nil || string(r.Body) != "B" || r.ResponseMode != rapitest.ResponseModeStreaming {
				t.Errorf("B answered %q in mode %q, err %+v; want \"B\" streamed", r.Body, r.ResponseMode, r.Err)
			}
			late.check(t, ErrInvocationEnded)
		})
	}
}

// lateRaw is a RawHandler: "A" and "A!" (which then calls
// runtime.Goexit) keep out, "B" lets it be written, then answers.
func lateRaw(late *lateUse) RawHandler {
	return func(_ context.Context, payload []byte, out *Buffer) error {
		switch string(payload) {
		case `"A"`, `"A!"`:
			late.keep(func() (int, error) { return out.Write([]byte("LATE-FROM-A")) })
			if string(payload) == `"A!"` {
				runtime.Goexit()
			}
		default:
			late.next()
		}
		out.B = append(out.B, payload...)
		return nil
	}
}

// TestLateRawBuffer: a RawHandler that keeps out, and returns or calls
// runtime.Goexit, and writes to out once the next invocation has begun
// never reaches that invocation's answer, served at N=1 (the slot's
// buffer) and through NewHandler (a pool shared by every Invoke).
func TestLateRawBuffer(t *testing.T) {
	for _, a := range []string{`"A"`, `"A!"`} {
		t.Run("runtime N=1 "+a, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			late := newLateUse()
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, lateRaw(late))
			if r := invoke(t, api, a); (a == `"A"`) != (r.Err == nil) {
				t.Errorf("%s answered %q, err %+v", a, r.Body, r.Err)
			}
			if r := invoke(t, api, `"B"`); r.Err != nil || string(r.Body) != `"B"` {
				t.Errorf("B answered %q, err %+v", r.Body, r.Err)
			}
			late.check(t, nil)
		})
	}
	t.Run("NewHandler", func(t *testing.T) {
		late := newLateUse()
		h := NewHandler(lateRaw(late))
		for _, p := range []string{`"A"`, `"B"`} {
			if b, err := h.Invoke(context.Background(), []byte(p)); err != nil || string(b) != p {
				t.Errorf("%s answered %q, %v", p, b, err)
			}
		}
		late.check(t, nil)
	})
	t.Run("InvokeStream", func(t *testing.T) {
		late := newLateUse()
		h := NewHandler(lateRaw(late)).(StreamInvoker)
		for _, p := range []string{`"A"`, `"B"`} {
			if _, b, body, err := h.InvokeStream(context.Background(), []byte(p)); err != nil || body != nil || string(b) != p {
				t.Errorf("%s answered %q, %v", p, b, err)
			}
		}
		late.check(t, nil)
	})
}

// strayWriterTo writes its ID, and leaves a goroutine writing it for as
// long as the writer takes it.
type strayWriterTo struct {
	id     string
	strays *sync.WaitGroup
	t      *testing.T
}

func (strayWriterTo) Read([]byte) (int, error) { panic("written out, not read") }

func (b strayWriterTo) WriteTo(w io.Writer) (int64, error) {
	b.strays.Go(func() {
		for range 1000 {
			if _, err := io.WriteString(w, b.id); err != nil {
				if !errors.Is(err, ErrInvocationEnded) {
					b.t.Errorf("stray %s: %v", b.id, err)
				}
				return
			}
		}
	})
	n, err := io.WriteString(w, b.id)
	return int64(n), err
}

// TestStrayStreamWriterRacesEnd: at N=1, each streamed io.WriterTo leaves
// a goroutine writing its ID, racing with the end of its WriteTo: each
// stream holds only its own IDs.
func TestStrayStreamWriterRacesEnd(t *testing.T) {
	var strays sync.WaitGroup
	defer strays.Wait()
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(_ context.Context, id string) (io.Reader, error) {
		return strayWriterTo{id: id + ";", strays: &strays, t: t}, nil
	})
	for i := range 50 {
		r := invoke(t, api, fmt.Sprintf(`"%d"`, i))
		for id := range strings.SplitSeq(strings.TrimSuffix(string(r.Body), ";"), ";") {
			if r.Err != nil || id != fmt.Sprint(i) {
				t.Fatalf("invocation %d answered %q, err %+v", i, r.Body, r.Err)
			}
		}
	}
}

// teeWriterTo copies "ab" into the writer through ReadFrom, from a reader
// that writes what it reads into the same writer.
type teeWriterTo struct{}

func (teeWriterTo) Read([]byte) (int, error) { panic("written out, not read") }

func (teeWriterTo) WriteTo(w io.Writer) (int64, error) {
	return w.(io.ReaderFrom).ReadFrom(io.TeeReader(strings.NewReader("ab"), w))
}

// TestStreamWriterReentrant: a reader that ReadFrom reads may write to
// the same writer: its Read runs outside the writer's lock.
func TestStreamWriterReentrant(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(context.Context) (io.Reader, error) {
		return teeWriterTo{}, nil
	})
	if r := invoke(t, api, `{}`); r.Err != nil || string(r.Body) != "abab" {
		t.Fatalf("answered %q, err %+v; want \"abab\"", r.Body, r.Err)
	}
}
