package lambdahttp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// emulated starts the bootstrap in testdata/panicky (lambdahttp.Handler:
// /ok/{i} answers "answer {i}", /panic panics) under the emulator at N=n.
func emulated(t *testing.T, n int) *rie.Emulator {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	return rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/panicky"), MaxConcurrency: n})
}

// invokeEmulator invokes each payload, par at a time, and checks each
// answer: 200 "answer {i}", or 500 for the indexes in panics.
func invokeEmulator(t *testing.T, e *rie.Emulator, what string, ps [][]byte, par int, panics map[int]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, p := range ps {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var r rie.Result
			var err error
			for range 500 { // a throttle (no /next pending yet) is retried, as a caller would
				if r, err = e.Invoke(ctx, p); err != nil || !r.Throttled {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err != nil || !r.OK() {
				t.Errorf("%s invocation %d: %v %+v", what, i, err, r)
				return
			}
			status, _, body := readAnswer(t, p, rapitest.Result{Body: r.Body})
			want, code := fmt.Sprintf("answer %d", i), 200
			if panics[i] {
				want, code = "Internal Server Error", 500
			}
			if status != code || body != want {
				t.Errorf("%s invocation %d: %d %q, want %d %q", what, i, status, body, code, want)
			}
		})
	}
	wg.Wait()
}

// TestPanicN8Emulator: under the emulator at N=8, for each door, one
// invocation panics: it answers 500 in its door's shape, the seven others
// their own, and the process lives on for the next door.
func TestPanicN8Emulator(t *testing.T) {
	e := emulated(t, 8)
	for round, door := range doors {
		ps := panicRound(t, door, round)
		invokeEmulator(t, e, door, ps, 8, map[int]bool{round: true})
	}
}

// TestDistinctDoorsN64Emulator: 2,000 invocations at N=64 mixing every
// door under the emulator, each answered with its own bytes.
func TestDistinctDoorsN64Emulator(t *testing.T) {
	e := emulated(t, 64)
	ps := make([][]byte, 2000)
	for i := range ps {
		ps[i] = doorEvent(t, doors[i%len(doors)], "GET", fmt.Sprintf("/ok/%d", i), fmt.Sprint(i), "", false)
	}
	invokeEmulator(t, e, "mixed", ps, 64, nil)
}
