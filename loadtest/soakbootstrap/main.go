// Command soakbootstrap is the soak's bootstrap for the handler forms: one
// process serves one form, picked by LMIGO_SOAK_FORM, through
// concurrent.Start, so that each form goes through its own path of the
// handler adapter (a RawHandler that dispatched to the others would test
// only the raw path):
//
//	typed       func(context.Context, Event) (Reply, error)
//	rawmessage  func(context.Context, json.RawMessage) (json.RawMessage, error)
//	raw         concurrent.RawHandler
//	handler     a lambda.Handler object
//	stream      func(context.Context, Event) (io.Reader, error): streamed
//	writerto    the same, its reader an io.WriterTo: it writes itself out
//	http        lambdahttp.Handler over an http.Handler: buffered
//	httpstream  lambdahttp.StreamingHandler: streamed
//	wrapped     oteltrace.Wrap(lambdahttp.StreamingHandler(...)): streamed
//
// The http forms take the event as the body of a payload format 2.0 event
// and answer it in an HTTP answer: an error as status 500 with the error's
// text, a panic as lambdahttp's 500.
//
// Every form answers Event the same way, so that the soak checks every
// answer against its own invocation:
//
//	{"token":"T"}                  answers {"token":"T","form":"F"}
//	{"token":"T","do":"error"}     fails with the error "soak error T"; the
//	                               stream form fails after its first chunk
//	                               (error trailers)
//	{"token":"T","do":"panic"}     panics with "soak panic T"
//	{"sleep_ms":n}                 first sleeps n ms (at most 2 s), or until
//	                               the invocation's deadline
//	{"announce":true}              first writes "started T" on stdout, so
//	                               that the soak knows the handler runs
//	{"token":"T","do":"huge"}      fails with an error message of 200 KiB
//	                               that begins "soak error T"; the http
//	                               forms panic with it
//	{"token":"T","do":"late"}      answers, and leaves a goroutine that
//	                               writes "LATE T" through what the form
//	                               writes its answer with (raw: out;
//	                               writerto: its io.Writer; http forms: the
//	                               ResponseWriter) a few times after the
//	                               handler returned; a late write that
//	                               succeeds where it must fail writes
//	                               "late-accepted T" on stdout
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/concurrent/oteltrace"
)

// Event is the payload of every form.
type Event struct {
	Token    string `json:"token"`
	Do       string `json:"do"`
	SleepMS  int    `json:"sleep_ms"`
	Announce bool   `json:"announce"`
}

// Reply is the answer of every form.
type Reply struct {
	Token string `json:"token"`
	Form  string `json:"form"`
}

// Forms by LMIGO_SOAK_FORM.
var forms = map[string]any{
	"typed":      handleTyped,
	"rawmessage": handleRawMessage,
	"raw":        concurrent.RawHandler(handleRaw),
	"handler":    invoker{},
	"stream":     handleStream,
	"writerto":   handleWriterTo,
	"http":       lambdahttp.Handler(http.HandlerFunc(serveHTTP)),
	"httpstream": lambdahttp.StreamingHandler(http.HandlerFunc(serveHTTP)),
	"wrapped":    oteltrace.Wrap(lambdahttp.StreamingHandler(http.HandlerFunc(serveHTTP))),
}

func main() {
	form := os.Getenv("LMIGO_SOAK_FORM")
	h, ok := forms[form]
	if !ok {
		fmt.Fprintf(os.Stderr, "soakbootstrap: LMIGO_SOAK_FORM=%q: want one of typed, rawmessage, raw, handler, stream, writerto, http, httpstream, wrapped\n", form)
		os.Exit(2)
	}
	concurrent.Start(h)
}

// run does what ev asks before its answer: it sleeps, fails or panics.
func run(ctx context.Context, ev Event) error {
	if ev.Announce {
		// One short write: lines of concurrent handlers never interleave.
		_, _ = os.Stdout.Write([]byte("started " + ev.Token + "\n"))
	}
	if ev.SleepMS > 0 {
		t := time.NewTimer(min(time.Duration(ev.SleepMS)*time.Millisecond, 2*time.Second))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	switch ev.Do {
	case "error":
		return errors.New("soak error " + ev.Token)
	case "huge":
		return errors.New(hugeMessage(ev.Token))
	case "panic":
		panic("soak panic " + ev.Token)
	}
	return nil
}

// hugeMessage is an error message far over any log line's bound.
func hugeMessage(token string) string {
	return "soak error " + token + " " + strings.Repeat("x", 200<<10)
}

// lateWrites is how often a late goroutine writes once its invocation
// ended, and how long it waits before each write after the first: long
// enough for the slot to serve its next invocation meanwhile.
const (
	lateWrites = 5
	lateEvery  = 2 * time.Millisecond
)

// writeLate writes "LATE T" through write a few times once ctx, the
// invocation's, is done: the runtime ends it after the invocation ended.
// mustFail: a write that succeeds is reported on stdout.
func writeLate(ctx context.Context, token string, mustFail bool, write func([]byte) error) {
	go func() {
		<-ctx.Done()
		for i := range lateWrites {
			if i > 0 {
				time.Sleep(lateEvery)
			}
			if write([]byte("LATE "+token)) == nil && mustFail {
				_, _ = os.Stdout.Write([]byte("late-accepted " + token + "\n"))
				return
			}
		}
	}()
}

// appendReply appends the answer of form to the token, as JSON.
func appendReply(b []byte, token, form string) []byte {
	b = append(b, `{"token":`...)
	b = strconv.AppendQuote(b, token)
	b = append(b, `,"form":"`...)
	b = append(b, form...)
	return append(b, `"}`...)
}

func handleTyped(ctx context.Context, ev Event) (Reply, error) {
	if err := run(ctx, ev); err != nil {
		return Reply{}, err
	}
	return Reply{Token: ev.Token, Form: "typed"}, nil
}

func handleRawMessage(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	if err := run(ctx, ev); err != nil {
		return nil, err
	}
	return appendReply(nil, ev.Token, "rawmessage"), nil
}

func handleRaw(ctx context.Context, payload []byte, out *concurrent.Buffer) error {
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return err
	}
	if err := run(ctx, ev); err != nil {
		return err
	}
	out.B = appendReply(out.B, ev.Token, "raw")
	if ev.Do == "late" {
		// A late Write to out goes nowhere, with no error (see concurrent.Buffer).
		writeLate(ctx, ev.Token, false, func(b []byte) error { _, err := out.Write(b); return err })
	}
	return nil
}

// invoker is a lambda.Handler object: the runtime sends its bytes as they are.
type invoker struct{}

func (invoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	if err := run(ctx, ev); err != nil {
		return nil, err
	}
	return appendReply(nil, ev.Token, "handler"), nil
}

func handleStream(ctx context.Context, ev Event) (io.Reader, error) {
	failing := ev.Do == "error"
	if !failing {
		if err := run(ctx, ev); err != nil {
			return nil, err
		}
	}
	// A few small Reads, so that the answer goes out in several chunks.
	return &stream{rest: appendReply(nil, ev.Token, "stream"), fail: failing, token: ev.Token}, nil
}

// stream yields its answer 7 bytes a Read; when fail is set it fails after
// the first Read instead, so that the error goes in the trailers.
type stream struct {
	rest  []byte
	fail  bool
	reads int
	token string
}

func (s *stream) Read(p []byte) (int, error) {
	if s.fail && s.reads > 0 {
		return 0, errors.New("soak error " + s.token)
	}
	if len(s.rest) == 0 {
		return 0, io.EOF
	}
	s.reads++
	n := copy(p[:min(len(p), 7)], s.rest)
	s.rest = s.rest[n:]
	return n, nil
}

func handleWriterTo(ctx context.Context, ev Event) (io.Reader, error) {
	if err := run(ctx, ev); err != nil {
		return nil, err
	}
	return &writerTo{stream: stream{rest: appendReply(nil, ev.Token, "writerto"), token: ev.Token}, late: ev.Do == "late", ctx: ctx}, nil
}

// writerTo writes its answer in 7-byte Writes; late keeps the writer.
type writerTo struct {
	stream
	late bool
	ctx  context.Context // the invocation's: WriteTo runs while it lives
}

func (w *writerTo) WriteTo(dst io.Writer) (int64, error) {
	var n int64
	for len(w.rest) > 0 {
		k, err := dst.Write(w.rest[:min(len(w.rest), 7)])
		n += int64(k)
		w.rest = w.rest[k:]
		if err != nil {
			return n, err
		}
	}
	if w.late {
		writeLate(w.ctx, w.token, true, func(b []byte) error { _, err := dst.Write(b); return err })
	}
	return n, nil
}

// serveHTTP is the http forms' handler: the body is the Event.
func serveHTTP(w http.ResponseWriter, r *http.Request) {
	var ev Event
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, "bad event: "+err.Error(), http.StatusBadRequest)
		return
	}
	if ev.Do == "huge" {
		panic(hugeMessage(ev.Token))
	}
	if err := run(r.Context(), ev); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(appendReply(nil, ev.Token, "http"))
	if ev.Do == "late" {
		writeLate(r.Context(), ev.Token, true, func(b []byte) error {
			w.Header().Set("X-Late", ev.Token)
			_, err := w.Write(b)
			return err
		})
	}
}
