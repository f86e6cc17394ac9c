package lambdahttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestPanicN8Emulator: the bootstrap in testdata/panicky under the
// emulator at N=8: the panicking invocation answers 500, the seven others
// their own, and the process lives for a second round.
func TestPanicN8Emulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/panicky"), MaxConcurrency: 8})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for round := range 2 {
		var wg sync.WaitGroup
		for i := range 8 {
			ev := event("GET", fmt.Sprintf("/ok/%d", i), "", nil)
			if i == round {
				ev = event("GET", "/panic", "", nil)
			}
			p := payload(t, ev)
			wg.Go(func() {
				var r rie.Result
				var err error
				for range 50 { // a throttle (no /next pending yet) is retried, as a caller would
					if r, err = e.Invoke(ctx, p); err != nil || !r.Throttled {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if err != nil || !r.OK() {
					t.Errorf("round %d invocation %d: %v %+v", round, i, err, r)
					return
				}
				var resp events.APIGatewayV2HTTPResponse
				if err := json.Unmarshal(r.Body, &resp); err != nil {
					t.Error(err)
					return
				}
				want, code := fmt.Sprintf("answer %d", i), 200
				if i == round {
					want, code = "Internal Server Error", 500
				}
				if resp.StatusCode != code || resp.Body != want {
					t.Errorf("round %d invocation %d: %d %q", round, i, resp.StatusCode, resp.Body)
				}
			})
		}
		wg.Wait()
	}
}
