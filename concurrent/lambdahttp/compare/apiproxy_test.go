package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// TestAPIProxyUnderLmigo: aws-lambda-go-api-proxy's httpadapter served by
// lmigo at N=8: every invocation answered with its own path, the request
// ID reaching the http.Handler through lambdacontext, and a panic in the
// http.Handler ending only its invocation (a function error), the others
// served.
func TestAPIProxyUnderLmigo(t *testing.T) {
	const n, total = 8, 200
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("handler fails")
		}
		lc, _ := lambdacontext.FromContext(r.Context())
		fmt.Fprintf(w, "%s %s", r.URL.Path, lc.AwsRequestID)
	})
	rt, err := concurrent.New(httpadapter.NewV2(mux).ProxyWithContext,
		concurrent.WithLookupEnv(api.Env(map[string]string{"AWS_LAMBDA_LOG_LEVEL": "FATAL"})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	ictx, icancel := context.WithTimeout(context.Background(), time.Minute)
	defer icancel()
	var wg sync.WaitGroup
	errs := make(chan string, total)
	for i := range total {
		wg.Go(func() {
			path := fmt.Sprintf("/item/%d", i)
			if i%25 == 3 {
				path = "/panic"
			}
			ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: path}
			ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = "GET", path
			payload, _ := json.Marshal(ev)
			res, err := api.Invoke(ictx, rapitest.Request{Payload: payload})
			switch {
			case err != nil:
				errs <- err.Error()
			case path == "/panic":
				if res.Err == nil {
					errs <- "a panic answered without an error"
				}
			case res.Err != nil:
				errs <- fmt.Sprintf("%s: %v", path, res.Err)
			default:
				var out events.APIGatewayV2HTTPResponse
				if err := json.Unmarshal(res.Body, &out); err != nil || out.Body != path+" "+res.RequestID {
					errs <- fmt.Sprintf("%s: got %q (%v)", path, out.Body, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if st := api.Stats(); st.Answered() != st.Invocations || st.Duplicates != 0 || st.NoEcho != 0 || st.Violations != 0 {
		t.Fatalf("not answered exactly once: %+v", st)
	}
}
