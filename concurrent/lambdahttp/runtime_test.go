package lambdahttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// serve runs handler through concurrent.New against a fake Runtime API
// at N=n until the test ends.
func serve(t *testing.T, n int, handler any) *rapitest.Server {
	t.Helper()
	return serveEnv(t, n, map[string]string{"AWS_LAMBDA_LOG_LEVEL": "FATAL"}, handler)
}

// serveEnv is serve with the environment variables env.
func serveEnv(t *testing.T, n int, env map[string]string, handler any) *rapitest.Server {
	t.Helper()
	// A minute, not Lambda's default 3 s: a 6 MiB body under -race on a
	// loaded machine is slow, not late.
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := concurrent.New(handler, concurrent.WithLookupEnv(api.Env(env)))
	if err != nil {
		api.Close()
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		st := api.Stats()
		if st.Answered() != st.Invocations || st.Duplicates != 0 || st.Violations != 0 {
			t.Errorf("accounting: %+v", st)
		}
		api.Close()
	})
	return api
}

// panicky answers /ok/{i} with its i and panics on /panic, before or
// after its first byte (?late).
func panicky() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/panic") {
			if r.URL.RawQuery == "late" {
				_, _ = io.WriteString(w, strings.Repeat("x", 8<<10)) // past the gathering: on the wire
			}
			panic("boom")
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "answer "+strings.TrimPrefix(r.URL.Path, "/ok/"))
	})
}

func invokeAll(t *testing.T, api *rapitest.Server, evs []*events.APIGatewayV2HTTPRequest, par int) []rapitest.Result {
	t.Helper()
	ps := make([][]byte, len(evs))
	for i, ev := range evs {
		ps[i] = payload(t, ev)
	}
	return invokePayloads(t, api, ps, par)
}

// invokePayloads invokes each payload, par at a time, and returns the
// results in order.
func invokePayloads(t *testing.T, api *rapitest.Server, ps [][]byte, par int) []rapitest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := make([]rapitest.Result, len(ps))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, p := range ps {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r, err := api.Invoke(ctx, rapitest.Request{Payload: p})
			if err != nil {
				t.Errorf("invoke %d: %v", i, err)
			}
			res[i] = r
		})
	}
	wg.Wait()
	return res
}

// TestPanicN8Buffered: at N=8, one handler panics; it answers 500, the
// seven others their own answers, and the runtime goes on.
func TestPanicN8Buffered(t *testing.T) {
	api := serve(t, 8, lambdahttp.Handler(panicky()))
	for round := range 3 {
		evs := make([]*events.APIGatewayV2HTTPRequest, 8)
		for i := range evs {
			evs[i] = event("GET", fmt.Sprintf("/ok/%d", i), "", nil)
		}
		evs[round] = event("GET", "/panic", "", nil)
		for i, r := range invokeAll(t, api, evs, 8) {
			if r.Err != nil {
				t.Fatalf("round %d invocation %d: %v", round, i, r.Err)
			}
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(r.Body, &resp); err != nil {
				t.Fatal(err)
			}
			want := events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: fmt.Sprintf("answer %d", i)}
			if i == round {
				want = events.APIGatewayV2HTTPResponse{StatusCode: 500, Body: "Internal Server Error"}
			}
			if resp.StatusCode != want.StatusCode || resp.Body != want.Body {
				t.Errorf("round %d invocation %d: %d %q, want %d %q", round, i, resp.StatusCode, resp.Body, want.StatusCode, want.Body)
			}
		}
	}
}

// TestPanicN8Streamed: the same streamed: a panic before the first byte
// answers a 500 prelude, one after it ends the stream with the error
// trailers; the others stream their own answers.
func TestPanicN8Streamed(t *testing.T) {
	api := serve(t, 8, lambdahttp.StreamingHandler(panicky()))
	evs := make([]*events.APIGatewayV2HTTPRequest, 8)
	for i := range evs {
		evs[i] = event("GET", fmt.Sprintf("/ok/%d", i), "", nil)
	}
	evs[2] = event("GET", "/panic", "", nil)
	evs[5] = event("GET", "/panic?late", "", nil)
	for i, r := range invokeAll(t, api, evs, 8) {
		switch i {
		case 2:
			if r.Err != nil {
				t.Fatalf("early panic: %v", r.Err)
			}
			head, body := splitStream(t, r.Body)
			if head["statusCode"] != 500.0 || string(body) != "Internal Server Error" {
				t.Errorf("early panic: %v %q", head, body)
			}
		case 5:
			fe := r.Err
			if fe == nil || !fe.Trailer || !bytes.Contains(fe.Body, []byte("boom")) {
				t.Errorf("late panic: %v", r.Err)
			}
		default:
			if r.Err != nil || r.ContentType != lambdahttp.StreamContentType || r.ResponseMode != "streaming" {
				t.Fatalf("invocation %d: %v %q %q", i, r.Err, r.ContentType, r.ResponseMode)
			}
			head, body := splitStream(t, r.Body)
			if head["statusCode"] != 200.0 || string(body) != fmt.Sprintf("answer %d", i) {
				t.Errorf("invocation %d: %v %q", i, head, body)
			}
		}
	}
}

// TestDistinctN64: 2,000 invocations at N=64, buffered and streamed,
// each with its own body: every answer is its own.
func TestDistinctN64(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Id", r.URL.Query().Get("id"))
		_, _ = fmt.Fprintf(w, "%s|%s|%s", r.URL.Query().Get("id"), b, concurrent.RequestID(r.Context()))
	})
	for _, mode := range []string{"buffered", "streamed"} {
		t.Run(mode, func(t *testing.T) {
			var api *rapitest.Server
			if mode == "buffered" {
				api = serve(t, 64, lambdahttp.Handler(echo))
			} else {
				api = serve(t, 64, lambdahttp.StreamingHandler(echo))
			}
			evs := make([]*events.APIGatewayV2HTTPRequest, 2000)
			for i := range evs {
				evs[i] = event("POST", fmt.Sprintf("/e?id=%d", i), strings.Repeat(fmt.Sprint(i), i%50+1), nil)
			}
			for i, r := range invokeAll(t, api, evs, 64) {
				if r.Err != nil {
					t.Fatalf("%d: %v", i, r.Err)
				}
				var id, body string
				if mode == "buffered" {
					var resp events.APIGatewayV2HTTPResponse
					_ = json.Unmarshal(r.Body, &resp)
					id, body = resp.Headers["X-Id"], resp.Body
				} else {
					head, b := splitStream(t, r.Body)
					h, _ := head["headers"].(map[string]any)
					id, _ = h["X-Id"].(string)
					body = string(b)
				}
				want := fmt.Sprintf("%d|%s|%s", i, evs[i].Body, r.RequestID)
				if id != fmt.Sprint(i) || body != want {
					t.Fatalf("%d: id %q body %q, want %q", i, id, body, want)
				}
			}
		})
	}
}

// TestRequestContext: r.Context() is the invocation's (deadline, request
// ID, lambdacontext, trace ID) and Request returns the event.
func TestRequestContext(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		dl, ok := ctx.Deadline()
		lc, _ := lambdacontext.FromContext(ctx)
		ev := lambdahttp.Request(ctx)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"deadline": ok && time.Until(dl) > 0, "requestId": concurrent.RequestID(ctx),
			"lc": lc != nil && lc.AwsRequestID == concurrent.RequestID(ctx), "trace": concurrent.TraceID(ctx),
			"rc": ev != nil && ev.RequestContext.RequestID == "rc-1", "route": ev.RouteKey,
		})
	})
	api := serve(t, 2, lambdahttp.Handler(h))
	r, err := api.Invoke(context.Background(), rapitest.Request{Payload: payload(t, event("GET", "/", "", nil)), TraceID: "Root=1-2-3"})
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	var resp events.APIGatewayV2HTTPResponse
	_ = json.Unmarshal(r.Body, &resp)
	var got map[string]any
	_ = json.Unmarshal([]byte(resp.Body), &got)
	want := map[string]any{"deadline": true, "requestId": r.RequestID, "lc": true, "trace": "Root=1-2-3", "rc": true, "route": "$default"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
