package lambdahttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// maxLogLine is the bound the concurrent package documents for every line
// its logger writes (docs/logging.md).
const maxLogLine = 32 << 10

var cutMarkRE = regexp.MustCompile(`…\[cut [0-9]+ bytes\]`)

// serveLogged runs handler as serve does, with the runtime's own logger
// writing JSON lines to a file, as it writes to stderr when deployed; it
// returns the API and a function that reads the lines written so far, but
// the runtime's line at start.
func serveLogged(t *testing.T, handler any) (*rapitest.Server, func() []string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	// New takes os.Stderr as the default logger's destination.
	stderr := os.Stderr
	os.Stderr = f
	api := serveEnv(t, 1, map[string]string{"AWS_LAMBDA_LOG_FORMAT": "JSON"}, handler)
	os.Stderr = stderr
	return api, func() []string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for l := range strings.SplitAfterSeq(string(b), "\n") {
			if l != "" && !strings.Contains(l, `"message":"runtime starting"`) {
				lines = append(lines, l)
			}
		}
		return lines
	}
}

// TestLongPanicLogBounded: a handler that panics with a 1 MiB value,
// buffered and streamed: the panic's line is at most the bound, valid
// JSON, marked where cut, and keeps its message and request ID.
func TestLongPanicLogBounded(t *testing.T) {
	huge := strings.Repeat(`Grüße "x" <b>`+"\x01", (1<<20)/16)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(huge) })
	for name, handler := range map[string]any{"buffered": lambdahttp.Handler(h), "streamed": lambdahttp.StreamingHandler(h)} {
		t.Run(name, func(t *testing.T) {
			api, lines := serveLogged(t, handler)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := api.Invoke(ctx, rapitest.Request{Payload: payload(t, event("GET", "/", "", nil))})
			if err != nil || r.Err != nil || !bytes.Contains(r.Body, []byte("Internal Server Error")) {
				t.Fatalf("%v %+v", err, r)
			}
			found := false
			for _, l := range lines() {
				m := checkLine(t, l)
				if m["message"] == "http handler panicked" {
					found = true
					if m["requestId"] != r.RequestID || !cutMarkRE.MatchString(l) {
						t.Errorf("panic line %.300q", l)
					}
				}
			}
			if !found {
				t.Fatalf("no panic line in %q", lines())
			}
		})
	}
}

// TestEventErrorLogNoValue: a payload that is not an HTTP event fails the
// invocation with ErrEvent; the /error quotes the offending value back to
// the caller, the runtime's log line does not.
func TestEventErrorLogNoValue(t *testing.T) {
	api, lines := serveLogged(t, lambdahttp.Handler(http.NotFoundHandler()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const secret = "4111111111111111111111"
	r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"requestContext":{"timeEpoch":` + secret + `}}`)})
	if err != nil || r.Err == nil || !bytes.Contains(r.Err.Body, []byte(secret)) {
		t.Fatalf("%v %+v", err, r)
	}
	ls := lines()
	if len(ls) != 1 {
		t.Fatalf("lines %q", ls)
	}
	m := checkLine(t, ls[0])
	delete(m, "timestamp")
	delete(m, "requestId")
	b, _ := json.Marshal(m)
	msg, _ := m["errorMessage"].(string)
	if strings.Contains(string(b), secret[:6]) || !strings.HasPrefix(msg, lambdahttp.ErrEvent.Error()) || !strings.Contains(msg, "int64") {
		t.Fatalf("line %s", ls[0])
	}
}

// checkLine fails t for a line over the bound or that is not one JSON
// object, and returns the object.
func checkLine(t *testing.T, l string) map[string]any {
	t.Helper()
	if len(l) > maxLogLine || !utf8.ValidString(l) {
		t.Errorf("line of %d bytes, the bound is %d: %.200q", len(l), maxLogLine, l)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(l), &m); err != nil {
		t.Errorf("not a JSON line: %v: %.200q", err, l)
	}
	return m
}
