package lambdainvoke

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestEmulator invokes lmigo's reference bootstrap in the emulator through
// the SDK: a reply, an exact size, a function error, and throttles under
// more closed-loop callers than N.
func TestEmulator(t *testing.T) {
	if err := rie.Supported(); err != nil {
		t.Skipf("the emulator cannot run here: %v", err)
	}
	const n = 4
	bin := rie.BuildT(t, "github.com/lmigo/lmigo/cmd/bootstrap")
	e := rie.StartT(t, rie.Options{Bootstrap: bin, MaxConcurrency: n, Timeout: 10 * time.Second})
	inv := newInvoker(t, Options{FunctionName: "function", Endpoint: baseURL(t, e.URL()), Static: true})

	t.Run("reply", func(t *testing.T) {
		r, err := inv.Invoke(t.Context(), []byte(`{"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		var reply struct {
			OK bool            `json:"ok"`
			ID json.RawMessage `json:"id"`
		}
		if r.Status != http.StatusOK || r.FunctionError != "" || r.Throttled || json.Unmarshal(r.Body, &reply) != nil || !reply.OK || string(reply.ID) != "1" {
			t.Fatalf("got %+v, body %s; want 200 and {\"ok\":true,\"id\":1,...}", r, r.Body)
		}
	})
	t.Run("size", func(t *testing.T) {
		r, err := inv.Invoke(t.Context(), []byte(`{"size":1024}`))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusOK || r.FunctionError != "" || len(r.Body) != 1024 || !json.Valid(r.Body) {
			t.Fatalf("got status %d, FunctionError %q, %d bytes; want 200 and 1024 bytes of JSON", r.Status, r.FunctionError, len(r.Body))
		}
	})
	t.Run("function error", func(t *testing.T) {
		r, err := inv.Invoke(t.Context(), []byte(`{"fail":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ ErrorMessage, ErrorType string }
		if r.Status != http.StatusOK || r.FunctionError == "" || r.Throttled || json.Unmarshal(r.Body, &doc) != nil || doc.ErrorMessage != "x" {
			t.Fatalf("got %+v, body %s; want 200, a FunctionError and errorMessage x", r, r.Body)
		}
		t.Logf("function error: FunctionError %q, body %s", r.FunctionError, r.Body)
	})
	t.Run("throttles", func(t *testing.T) {
		s := closedLoop(t, inv, 4*n, time.Second, 500)
		t.Logf("N=%d, %d callers: %d ok, %d throttled (status %v), %d other", n, 4*n, s.ok, s.throttled, s.throttleStatus, s.other)
		if s.ok == 0 {
			t.Error("no invoke succeeded")
		}
		if s.other > 0 {
			t.Errorf("%d answers were neither success nor throttle, first: %s", s.other, s.firstOther)
		}
		for st := range s.throttleStatus {
			if st != http.StatusBadRequest {
				t.Errorf("a throttle had status %d, want 400", st)
			}
		}
		if s.throttled == 0 {
			t.Log("no throttle happened: the mapping was not exercised against the emulator this time")
		}
	})
}

type loopStats struct {
	ok, throttled, other int
	throttleStatus       map[int]int
	firstOther           string
}

// closedLoop runs callers that each invoke again as soon as the last invoke
// is answered, for d or until perCaller invokes each.
func closedLoop(t *testing.T, inv *Invoker, callers int, d time.Duration, perCaller int) loopStats {
	t.Helper()
	deadline := time.Now().Add(d)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
		s  = loopStats{throttleStatus: map[int]int{}}
	)
	for range callers {
		wg.Go(func() {
			for i := 0; i < perCaller && time.Now().Before(deadline); i++ {
				r, err := inv.Invoke(t.Context(), []byte(`{"id":2}`))
				mu.Lock()
				switch {
				case err != nil:
					if s.other == 0 {
						s.firstOther = err.Error()
					}
					s.other++
				case r.Throttled:
					s.throttled++
					s.throttleStatus[r.Status]++
				case r.Status == http.StatusOK && r.FunctionError == "":
					s.ok++
				default:
					if s.other == 0 {
						s.firstOther = string(r.Body)
					}
					s.other++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return s
}

// baseURL returns the scheme and host of the emulator's invoke URL: the
// SDK adds the path itself.
func baseURL(t *testing.T, invokeURL string) string {
	t.Helper()
	u, err := url.Parse(invokeURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Scheme + "://" + u.Host
}
