package oteltrace_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/oteltrace"
	"github.com/lmigo/lmigo/rapi/rapitest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// TestSpanCarriesZone: with Lambda's metadata endpoint in the environment
// (a loopback stand-in that checks path and token), each span of 8
// invocations at once carries cloud.availability_zone, the zone ID.
func TestSpanCarriesZone(t *testing.T) {
	const zone, token, n = "use1-az2", "token-of-this-environment", 8
	if got, err := concurrent.AvailabilityZoneID(t.Context()); err == nil && got != zone {
		t.Skipf("this process knows another zone already: %q", got)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/2026-01-15/metadata/execution-environment" || r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "refused", http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"AvailabilityZoneID":%q}`, zone)
	}))
	defer srv.Close()
	t.Setenv("AWS_LAMBDA_METADATA_API", srv.Listener.Addr().String())
	t.Setenv("AWS_LAMBDA_METADATA_TOKEN", token)

	tp, exp := recorder(t)
	fn := func(_ context.Context, s string) (string, error) { return s, nil }
	api := serve(t, oteltrace.Wrap(fn, oteltrace.WithTracerProvider(tp), oteltrace.WithLookupEnv(lookup)), n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			h, _, _ := header(i) // sampled
			res, err := api.Invoke(t.Context(), rapitest.Request{Payload: fmt.Appendf(nil, `"%d"`, i), TraceID: h})
			if err != nil || res.Err != nil || string(res.Body) != fmt.Sprintf(`"%d"`, i) {
				t.Errorf("invocation %d: %v %v %s", i, err, res.Err, res.Body)
			}
		})
	}
	wg.Wait()
	spans := exp.GetSpans()
	if len(spans) != n {
		t.Fatalf("%d spans, want %d", len(spans), n)
	}
	for _, s := range spans {
		if got := attrs(s)[semconv.CloudAvailabilityZoneKey].AsString(); got != zone {
			t.Errorf("span of %s: cloud.availability_zone %q, want %q",
				attrs(s)[semconv.FaaSInvocationIDKey].AsString(), got, zone)
		}
	}
}
