package oteltrace_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/panjf2000/ants/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// ants starts a default pool when it is imported.
	ants.Release()
	goleak.VerifyTestMain(m)
}

// testEnv is the function's environment Wrap reads in the tests.
var testEnv = map[string]string{
	"AWS_LAMBDA_FUNCTION_NAME":        "lmigo-fake",
	"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
	"AWS_REGION":                      "us-east-1",
	"AWS_LAMBDA_LOG_STREAM_NAME":      "2026/01/01/[$LATEST]abc",
	"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
	"AWS_LAMBDA_INITIALIZATION_TYPE":  "lambda-managed-instances",
	"AWS_LAMBDA_LOG_LEVEL":            "FATAL",
}

func lookup(k string) (string, bool) { v, ok := testEnv[k]; return v, ok }

// serve runs h with lmigo at N=n against a new fake Runtime API until the
// test ends.
func serve(t testing.TB, h any, n int) *rapitest.Server {
	t.Helper()
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := concurrent.New(h, concurrent.WithLookupEnv(api.Env(testEnv)))
	if err != nil {
		api.Close()
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := rt.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() {
		stop()
		wg.Wait()
		api.Close()
	})
	return api
}
