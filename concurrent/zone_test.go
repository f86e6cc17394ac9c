package concurrent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/internal/zone"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
	"go.uber.org/zap"
)

// testZone is the zone the emulator and the fake endpoint answer.
const testZone = "use1-az1"

// TestZoneN64Runtime: 64 invocations at once, each with its own payload,
// ask for the zone from their handlers; the endpoint holds its answer
// until all 64 wait for it, gets one request, and every invocation is
// answered with the zone and its own payload.
func TestZoneN64Runtime(t *testing.T) {
	const n = 64
	release := make(chan struct{})
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-release:
			fmt.Fprintf(w, `{"AvailabilityZoneID":%q}`, testZone)
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	z := zone.NewReader(func(name string) (string, bool) {
		return map[string]string{"AWS_LAMBDA_METADATA_API": srv.Listener.Addr().String(), "AWS_LAMBDA_METADATA_TOKEN": "t"}[name], true
	})
	z.Timeout = time.Hour
	var waiting sync.WaitGroup
	waiting.Add(n)
	z.Waiting = waiting.Done
	saved := processZone
	processZone = z
	t.Cleanup(func() { processZone = saved })

	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	rt, err := New(func(ctx context.Context, in struct{ ID int }) (string, error) {
		zone, err := AvailabilityZoneID(ctx)
		return fmt.Sprintf("%s %d", zone, in.ID), err
	}, WithLookupEnv(api.Env(nil)), WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	var wg sync.WaitGroup
	for id := range n {
		wg.Go(func() {
			res, err := api.Invoke(ctx, rapitest.Request{Payload: fmt.Appendf(nil, `{"ID":%d}`, id)})
			if err != nil || res.Err != nil {
				t.Error(err, res.Err)
				return
			}
			var got string
			if err := json.Unmarshal(res.Body, &got); err != nil || got != fmt.Sprintf("%s %d", testZone, id) {
				t.Errorf("invocation %d answered %s (%v)", id, res.Body, err)
			}
		})
	}
	waiting.Wait()
	close(release)
	wg.Wait()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := requests.Load(); got != 1 {
		t.Fatalf("%d requests for %d invocations, want 1", got, n)
	}
}

// TestZoneUnderEmulator: under the AWS emulator's LMI mode, which serves
// the metadata endpoint at the Runtime API's address with its own token
// and the zone use1-az1, a handler reads the zone.
func TestZoneUnderEmulator(t *testing.T) {
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/zone"), MaxConcurrency: 4})
	var r rie.Result
	for {
		var err error
		if r, err = e.Invoke(t.Context(), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if !r.Throttled {
			break
		}
		time.Sleep(5 * time.Millisecond) // a throttle: the slots are not polling yet
	}
	if !r.OK() || string(r.Body) != `"`+testZone+`"` {
		t.Fatalf("invoke: status %d, error type %q, body %s\n%s", r.Status, r.FunctionError, r.Body, e.Logs())
	}
}
