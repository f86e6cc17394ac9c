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
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/lmigo/lmigo/concurrent"
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
}

func main() {
	form := os.Getenv("LMIGO_SOAK_FORM")
	h, ok := forms[form]
	if !ok {
		fmt.Fprintf(os.Stderr, "soakbootstrap: LMIGO_SOAK_FORM=%q: want typed, rawmessage, raw, handler or stream\n", form)
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
	case "panic":
		panic("soak panic " + ev.Token)
	}
	return nil
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
