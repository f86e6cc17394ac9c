package rie

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// The emulator checks the Lambda-Runtime-Invocation-Id that rapi echoes: a
// bootstrap on rapi gets it with each invocation, an answer that echoes
// another ID is refused with 410 on /response and /error alike, and the
// invocation stays open, so that the answer with the right echo reaches
// the caller.
func TestInvocationIDEcho(t *testing.T) {
	t.Parallel()
	e := StartT(t, Options{Bootstrap: BuildT(t, "./testdata/echoid"), MaxConcurrency: 1, Timeout: 5 * time.Second})
	for _, route := range []string{"response", "error"} {
		t.Run(route, func(t *testing.T) {
			payload := `{"route":"` + route + `","token":"echo-` + route + `"}`
			// The bootstrap's next poll may not be registered yet when
			// the first answer reaches the caller: retry a throttle, as
			// a caller would.
			ctx := invokeCtx(t)
			r, err := e.Invoke(ctx, []byte(payload))
			for err == nil && r.Throttled && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
				r, err = e.Invoke(ctx, []byte(payload))
			}
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK() {
				t.Fatalf("status %d, error type %q, body %s; want the right answer", r.Status, r.FunctionError, r.Body)
			}
			var rep struct {
				InvocationID string          `json:"invocationId"`
				WrongStatus  int             `json:"wrongStatus"`
				WrongErr     string          `json:"wrongErr"`
				Payload      json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(r.Body, &rep); err != nil {
				t.Fatalf("body %s: %v", r.Body, err)
			}
			if rep.InvocationID == "" {
				t.Errorf("the emulator sent no Lambda-Runtime-Invocation-Id")
			}
			if rep.WrongStatus != http.StatusGone {
				t.Errorf("the wrong echo got status %d (%s), want 410", rep.WrongStatus, rep.WrongErr)
			}
			if string(rep.Payload) != payload {
				t.Errorf("the caller got payload %s, want its own %s", rep.Payload, payload)
			}
		})
	}
}
