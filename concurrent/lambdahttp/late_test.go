package lambdahttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// TestLateResponseWriter: at N=1, buffered and streamed, invocation A's
// handler leaves a goroutine with its ResponseWriter, then returns or
// panics; the goroutine uses the writer once B has begun on the same slot,
// and B waits for it, then answers. The late calls fail or go nowhere
// without panicking, and B's answer holds only its own status, headers
// and bytes.
func TestLateResponseWriter(t *testing.T) {
	for _, mode := range []string{"buffered", "streamed"} {
		for _, end := range []string{"return", "panic"} {
			t.Run(mode+"/"+end, func(t *testing.T) {
				began := make(chan struct{})
				late := make(chan string, 1) // what went wrong in the late goroutine
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/A" {
						go func() {
							<-began
							late <- useLate(w)
						}()
						if end == "panic" {
							panic("A ends")
						}
						_, _ = io.WriteString(w, "A")
						return
					}
					close(began)
					if msg := <-late; msg != "" {
						t.Error(msg)
					}
					_, _ = io.WriteString(w, "B")
				})
				var api *rapitest.Server
				if mode == "buffered" {
					api = serve(t, 1, lambdahttp.Handler(h))
				} else {
					api = serve(t, 1, lambdahttp.StreamingHandler(h))
				}
				for _, name := range []string{"A", "B"} {
					wantStatus, wantBody := 200, name
					if name == "A" && end == "panic" {
						wantStatus, wantBody = 500, "Internal Server Error"
					}
					status, header, body := lateAnswer(t, api, mode, "/"+name)
					if status != wantStatus || header != "" || body != wantBody {
						t.Errorf("%s answered %d, X-Late %q, body %q; want %d, none, %q",
							name, status, header, body, wantStatus, wantBody)
					}
				}
			})
		}
	}
}

// useLate uses w as a handler's stray goroutine would, after its
// invocation ended, and says what went wrong ("" if nothing). Each call
// is tried on its own, so that one panic does not hide the others.
func useLate(w http.ResponseWriter) string {
	var msgs []string
	try := func(what string, f func() error) {
		defer func() {
			if v := recover(); v != nil {
				msgs = append(msgs, fmt.Sprintf("late %s panicked: %v", what, v))
			}
		}()
		if err := f(); !errors.Is(err, io.ErrClosedPipe) {
			msgs = append(msgs, fmt.Sprintf("late %s: %v, want %v", what, err, io.ErrClosedPipe))
		}
	}
	try("Header", func() error { w.Header().Set("X-Late", "1"); return io.ErrClosedPipe })
	try("WriteHeader", func() error { w.WriteHeader(http.StatusTeapot); return io.ErrClosedPipe })
	try("Write", func() error {
		n, err := io.WriteString(w, "LATE-0B")
		if n != 0 {
			return fmt.Errorf("%d bytes written, error %v", n, err)
		}
		return err
	})
	try("Flush", func() error { w.(http.Flusher).Flush(); return io.ErrClosedPipe })
	try("FlushError", http.NewResponseController(w).Flush)
	return strings.Join(msgs, "; ")
}

// lateAnswer invokes path and returns the status, the X-Late header and
// the body of its answer.
func lateAnswer(t *testing.T, api *rapitest.Server, mode, path string) (status int, header, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := api.Invoke(ctx, rapitest.Request{Payload: payload(t, event("GET", path, "", nil))})
	if err != nil || r.Err != nil {
		t.Fatalf("%s: %v %+v", path, err, r.Err)
	}
	if mode == "buffered" {
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(r.Body, &resp); err != nil {
			t.Fatalf("%s: %v: %q", path, err, r.Body)
		}
		return resp.StatusCode, resp.Headers["X-Late"], resp.Body
	}
	head, b := splitStream(t, r.Body)
	headers, _ := head["headers"].(map[string]any)
	header, _ = headers["X-Late"].(string)
	code, _ := head["statusCode"].(float64)
	return int(code), header, string(b)
}

// TestStrayWriterRacesEnd: at N=1, buffered and streamed, each handler
// leaves a goroutine writing its own ID for as long as the writer takes
// it, racing with the end of the invocation: each answer holds only its
// own IDs, and the stray stops at the first refused Write.
func TestStrayWriterRacesEnd(t *testing.T) {
	for _, mode := range []string{"buffered", "streamed"} {
		t.Run(mode, func(t *testing.T) {
			var strays sync.WaitGroup
			defer strays.Wait()
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id := r.URL.Path[1:] + ";"
				strays.Go(func() {
					defer func() {
						if v := recover(); v != nil {
							t.Errorf("stray %s panicked: %v", id, v)
						}
					}()
					for range 1000 {
						if _, err := io.WriteString(w, id); err != nil {
							return
						}
					}
				})
				_, _ = io.WriteString(w, id)
			})
			var api *rapitest.Server
			if mode == "buffered" {
				api = serve(t, 1, lambdahttp.Handler(h))
			} else {
				api = serve(t, 1, lambdahttp.StreamingHandler(h))
			}
			for i := range 50 {
				_, _, body := lateAnswer(t, api, mode, fmt.Sprintf("/%d", i))
				for id := range strings.SplitSeq(strings.TrimSuffix(body, ";"), ";") {
					if id != fmt.Sprint(i) {
						t.Fatalf("invocation %d answered %q", i, body)
					}
				}
			}
		})
	}
}
