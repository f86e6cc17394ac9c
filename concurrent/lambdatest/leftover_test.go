package lambdatest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

type work struct {
	Leak     int  `json:"leak"`     // goroutines left blocked
	Wait     bool `json:"wait"`     // work started with concurrent.Go, waited for
	Detached bool `json:"detached"` // work started with concurrent.GoDetached
}

// TestResultLeftover: Result.Leftover counts the goroutines a handler left
// running, invocation by invocation, 16 served at once; work waited for
// with concurrent.Wait counts 0; GoDetached's is counted apart.
func TestResultLeftover(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f := lambdatest.Start(t, func(ctx context.Context, w work) (string, error) {
		for range w.Leak {
			go func() { <-release }()
		}
		if w.Wait {
			for range 3 {
				if err := concurrent.Go(ctx, func(context.Context) error { return nil }); err != nil {
					return "", err
				}
			}
			if err := concurrent.Wait(ctx); err != nil {
				return "", err
			}
		}
		if w.Detached {
			concurrent.GoDetached(ctx, func(context.Context) { <-release })
		}
		return "ok", nil
	}, lambdatest.WithConcurrency(16))

	tests := []struct {
		event              string
		leftover, detached int
	}{
		{`{}`, 0, 0},
		{`{"leak":1}`, 1, 0},
		{`{"wait":true}`, 0, 0},
		{`{"detached":true}`, 0, 1},
		{`{"leak":2,"wait":true,"detached":true}`, 2, 1},
	}
	for _, tt := range tests {
		res := f.Invoke([]byte(tt.event))
		if res.Err != nil || res.Leftover != tt.leftover || res.Detached != tt.detached {
			t.Errorf("%s: Err %v, Leftover %d, Detached %d; want %d and %d", tt.event, res.Err, res.Leftover, res.Detached, tt.leftover, tt.detached)
		}
	}

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			res := f.Invoke(fmt.Appendf(nil, `{"leak":%d,"wait":true}`, i%4))
			if res.Err != nil || res.Leftover != i%4 {
				t.Errorf("served beside 15 others: Err %v, Leftover %d, want %d", res.Err, res.Leftover, i%4)
			}
		})
	}
	wg.Wait()
}

// TestReportLinesAside: with LMIGO_REPORT=on, the lines the runtime writes
// about an invocation once it ended (its report, the warning of the
// goroutines it left) are neither its Logs nor lines CheckIsolation
// calls late.
func TestReportLinesAside(t *testing.T) {
	t.Setenv("LMIGO_REPORT", "on")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h := func(ctx context.Context, w work) (int, error) {
		for range w.Leak {
			go func() { <-release }()
		}
		return w.Leak, nil
	}
	events := [][]byte{[]byte(`{"leak":1}`), []byte(`{"leak":2}`), []byte(`{}`)}
	lambdatest.CheckIsolation(t, h, events)
	f := lambdatest.Start(t, h)
	if res := f.Invoke(events[0]); len(res.Logs) != 0 || res.Leftover != 1 {
		t.Errorf("Logs %q, Leftover %d; want none and 1", res.Logs, res.Leftover)
	}
}
