package lambdahttp_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// echoID answers the invocation's own bytes: its id (query and header),
// its body and its request ID, with a header and a cookie of its own.
var echoID = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	id := r.URL.Query().Get("id")
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Id", id)
	http.SetCookie(w, &http.Cookie{Name: "id", Value: id})
	_, _ = fmt.Fprintf(w, "%s|%s|%s|%s", id, r.Header.Get("X-Req"), b, concurrent.RequestID(r.Context()))
})

// TestDistinctDoorsN64: 2,000 invocations at N=64 mixing every door,
// buffered and streamed (StreamingHandler streams REST and Function URL
// events, buffers the others), each with its own body: every answer is its
// own, in its door's shape.
func TestDistinctDoorsN64(t *testing.T) {
	for _, mode := range []string{"buffered", "streamed"} {
		t.Run(mode, func(t *testing.T) {
			handler := any(lambdahttp.Handler(echoID))
			if mode == "streamed" {
				handler = lambdahttp.StreamingHandler(echoID)
			}
			api := serve(t, 64, handler)
			ps := make([][]byte, 2000)
			bodies := make([]string, len(ps))
			for i := range ps {
				bodies[i] = strings.Repeat(fmt.Sprint(i), i%50+1)
				ps[i] = doorEvent(t, doors[i%len(doors)], "POST", fmt.Sprintf("/e/%d", i), fmt.Sprint(i), bodies[i], i%3 == 0)
			}
			streamed := 0
			for i, r := range invokePayloads(t, api, ps, 64) {
				if r.Err != nil {
					t.Fatalf("%d (%s): %v", i, doors[i%len(doors)], r.Err)
				}
				if r.ContentType == lambdahttp.StreamContentType {
					streamed++
				}
				status, h, body := readAnswer(t, ps[i], r)
				want := fmt.Sprintf("%d|%d|%s|%s", i, i, bodies[i], r.RequestID)
				if status != 200 || h.Get("X-Id") != fmt.Sprint(i) || h.Get("Set-Cookie") != fmt.Sprintf("id=%d", i) || body != want {
					t.Fatalf("%d (%s): %d %v %q, want %q", i, doors[i%len(doors)], status, h, body, want)
				}
			}
			if wantStreamed := map[string]int{"buffered": 0, "streamed": 2000 / 3}[mode]; streamed < wantStreamed {
				t.Errorf("%d answers streamed, want at least %d", streamed, wantStreamed)
			}
		})
	}
}

// TestPanicN8Doors: at N=8, for each door, buffered and streamed, one
// handler panics before its first byte: it answers 500 in its door's
// shape, the seven others their own answers.
func TestPanicN8Doors(t *testing.T) {
	for _, mode := range []string{"buffered", "streamed"} {
		t.Run(mode, func(t *testing.T) {
			handler := any(lambdahttp.Handler(panicky()))
			if mode == "streamed" {
				handler = lambdahttp.StreamingHandler(panicky())
			}
			api := serve(t, 8, handler)
			for round, door := range doors {
				ps := panicRound(t, door, round)
				for i, r := range invokePayloads(t, api, ps, 8) {
					if r.Err != nil {
						t.Fatalf("%s invocation %d: %v", door, i, r.Err)
					}
					status, _, body := readAnswer(t, ps[i], r)
					wantStatus, wantBody := 200, fmt.Sprintf("answer %d", i)
					if i == round {
						wantStatus, wantBody = 500, "Internal Server Error"
					}
					if status != wantStatus || body != wantBody {
						t.Errorf("%s invocation %d: %d %q, want %d %q", door, i, status, body, wantStatus, wantBody)
					}
				}
			}
		})
	}
}
