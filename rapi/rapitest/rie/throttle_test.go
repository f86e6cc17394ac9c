package rie

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestClosedLoopThrottles measures, against the aws-lambda-go echo
// function, how many invokes of closed-loop callers the emulator rejects
// as Runtime.Unavailable, and checks what such a rejection looks like. It
// asserts no share: the share is the baseline a runtime is compared with.
func TestClosedLoopThrottles(t *testing.T) {
	tests := []struct {
		n, callers int
	}{
		{n: 4, callers: 4},
		{n: 1, callers: 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("N=%d/callers=%d", tt.n, tt.callers), func(t *testing.T) {
			e := StartT(t, Options{Bootstrap: echoBootstrap(t), MaxConcurrency: tt.n})
			// Let every slot of the runtime register its first /next.
			time.Sleep(100 * time.Millisecond)
			s := closedLoop(t, e, tt.callers, 1500*time.Millisecond, 20000)
			total := s.ok + s.throttled + s.other
			t.Logf("N=%d, %d callers: %d invokes, %d ok, %d Runtime.Unavailable (%.1f%%), %d other",
				tt.n, tt.callers, total, s.ok, s.throttled, 100*float64(s.throttled)/float64(max(total, 1)), s.other)
			if s.ok == 0 {
				t.Fatalf("no invoke succeeded: %+v", s)
			}
			if s.other > 0 {
				t.Errorf("%d answers were neither success nor throttle, first: %s", s.other, s.firstOther)
			}
			if s.throttled > 0 {
				r := s.firstThrottle
				t.Logf("throttle answer: status %d, %s: %s, Content-Type %q, body %s",
					r.Status, ErrorTypeHeader, r.FunctionError, r.Header.Get("Content-Type"), r.Body)
				var doc struct{ ErrorType, ErrorMessage string }
				if r.Status != http.StatusBadRequest || json.Unmarshal(r.Body, &doc) != nil || doc.ErrorType != ThrottleErrorType {
					t.Errorf("throttle answer: status %d, body %s; want 400 and errorType %s", r.Status, r.Body, ThrottleErrorType)
				}
			}
		})
	}
}

type loopStats struct {
	ok, throttled, other int
	firstThrottle        Result
	firstOther           string
}

// closedLoop runs callers that each send the next invoke as soon as the
// last one is answered, for d or until maxPerCaller invokes each.
func closedLoop(t *testing.T, e *Emulator, callers int, d time.Duration, maxPerCaller int) loopStats {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d+10*time.Second)
	defer cancel()
	deadline := time.Now().Add(d)
	var (
		mu  sync.Mutex
		s   loopStats
		wg  sync.WaitGroup
		err error
	)
	payload := []byte(`{"closed":"loop"}`)
	for range callers {
		wg.Go(func() {
			for i := 0; i < maxPerCaller && time.Now().Before(deadline); i++ {
				r, ierr := e.Invoke(ctx, payload)
				mu.Lock()
				switch {
				case ierr != nil:
					if err == nil {
						err = ierr
					}
				case r.OK():
					s.ok++
				case r.Throttled:
					if s.throttled == 0 {
						s.firstThrottle = r
					}
					s.throttled++
				default:
					if s.other == 0 {
						s.firstOther = fmt.Sprintf("status %d, %s, %s", r.Status, r.FunctionError, r.Body)
					}
					s.other++
				}
				mu.Unlock()
				if ierr != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	return s
}
