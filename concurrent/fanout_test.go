package concurrent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/metrics"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

type fanoutPanic struct{ n int }

// TestFanOutPanicN64 serves 256 invocations at N=64 whose handlers fan
// out three parts of their answer with Go; in every eighth one a part
// panics, and the handler returns without Wait. Those answer a function
// error of the panic's type, logged with their request ID; the others
// answer their own distinct payloads; the process goes on, and nothing
// is left running once Run has returned.
func TestFanOutPanicN64(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	api, err := rapitest.New(rapitest.Options{Queue: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.ErrorLevel)
	handler := func(ctx context.Context, i int) (string, error) {
		parts := make([]string, 3)
		for k := range parts {
			if err := Go(ctx, func(context.Context) error {
				if i%8 == 0 && k == 1 {
					panic(fanoutPanic{i})
				}
				parts[k] = fmt.Sprintf("%d.%d", i, k)
				return nil
			}); err != nil {
				return "", err
			}
		}
		if i%8 == 0 {
			return "returned before its work", nil
		}
		if err := Wait(ctx); err != nil {
			return "", err
		}
		return strings.Join(parts, ","), nil
	}
	rt, err := New(handler, WithLookupEnv(env{"AWS_LAMBDA_MAX_CONCURRENCY": "64",
		"AWS_LAMBDA_RUNTIME_API": api.Addr()}.lookup), WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	const total = 256
	ids := make([]string, total)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for i := g; i < total; i += 64 {
				r := invoke(t, api, strconv.Itoa(i))
				ids[i] = r.RequestID
				if i%8 == 0 {
					if r.Err == nil || r.Err.Type != "fanoutPanic" || !strings.Contains(string(r.Err.Body), fmt.Sprintf(`"errorMessage":"{%d}"`, i)) {
						t.Errorf("invocation %d: %s %v, want the panic's error", i, r.Body, r.Err)
					}
					continue
				}
				want, _ := json.Marshal(fmt.Sprintf("%d.0,%d.1,%d.2", i, i, i))
				if r.Err != nil || string(r.Body) != string(want) {
					t.Errorf("invocation %d: %s %v, want %s", i, r.Body, r.Err, want)
				}
			}
		})
	}
	wg.Wait()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_ = api.Close()
	for i := 0; i < total; i += 8 {
		if n := logs.FilterMessage("invocation panicked").FilterField(zap.String(keyRequestID, ids[i])).Len(); n != 1 {
			t.Errorf("invocation %d: %d lines of its panic with its request ID, want 1", i, n)
		}
	}
	goleak.VerifyNone(t, ignore)
}

// TestFanOutWaitedBeforeAnswer: a handler that returns before its work
// ends is answered only after the work has ended. The work records a
// metric once it is let go, after the handler has returned; the runtime
// writes the invocation's metrics before its answer, so the answer finds
// the work's metric written only if it waited for the work.
func TestFanOutWaitedBeforeAnswer(t *testing.T) {
	api := newAPI(t, rapitest.Options{})
	out := new(syncBuffer)
	returned := make(chan struct{})
	release := make(chan struct{})
	var lateErr atomic.Value
	serve(t, api, env{"POWERTOOLS_METRICS_NAMESPACE": "Shop"}, func(ctx context.Context) (string, error) {
		_ = Go(ctx, func(ctx context.Context) error {
			<-release
			if err := metrics.Add(ctx, "WorkDone", metrics.Count, 1); err != nil {
				lateErr.Store(err)
			}
			return nil
		})
		close(returned)
		return "ok", nil
	}, withStdout(out))
	go func() {
		<-returned
		close(release)
	}()
	r := invoke(t, api, "{}")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if err, _ := lateErr.Load().(error); err != nil {
		t.Fatalf("the work ran after its invocation ended: %v", err)
	}
	docs := emfLines(t, out.String())
	if len(docs[r.RequestID]) == 0 || docs[r.RequestID][0].values["WorkDone"] == nil {
		t.Fatalf("answered before the work's metric was written: %q", out.String())
	}
}

// TestFanOutBound: one invocation never runs more than maxWork functions
// at once, however many it starts.
func TestFanOutBound(t *testing.T) {
	api := newAPI(t, rapitest.Options{})
	var running, most atomic.Int64
	serve(t, api, env{}, func(ctx context.Context) (int64, error) {
		for range 4 * maxWork {
			if err := Go(ctx, func(context.Context) error {
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				running.Add(-1)
				return nil
			}); err != nil {
				return 0, err
			}
		}
		return 0, Wait(ctx)
	})
	if r := invoke(t, api, "{}"); r.Err != nil {
		t.Fatal(r.Err)
	}
	if m := most.Load(); m > maxWork {
		t.Fatalf("%d functions ran at once, want at most %d", m, maxWork)
	}
}

// TestFanOutErrors: an error of the work that the handler did not take
// with Wait fails the invocation; one it took does not; Go after the
// answer returns ErrLateWork; outside an invocation Go runs f at once and
// returns its panic.
func TestFanOutErrors(t *testing.T) {
	api := newAPI(t, rapitest.Options{Queue: true})
	late := make(chan error, 1)
	serve(t, api, env{}, func(ctx context.Context, mode string) (string, error) {
		_ = Go(ctx, func(context.Context) error { return fmt.Errorf("work failed") })
		switch mode {
		case "wait":
			return fmt.Sprint(Wait(ctx)), nil
		case "late":
			go func() {
				_ = Wait(ctx)
				<-ctx.Done()
				late <- Go(ctx, func(context.Context) error { return nil })
			}()
		}
		return "ok", nil
	})
	if r := invoke(t, api, `"wait"`); r.Err != nil || string(r.Body) != `"work failed"` {
		t.Errorf("waited: %s %v", r.Body, r.Err)
	}
	if r := invoke(t, api, `"no"`); r.Err == nil || !strings.Contains(string(r.Err.Body), "work failed") {
		t.Errorf("not waited: %s %v, want the work's error", r.Body, r.Err)
	}
	r := invoke(t, api, `"late"`)
	if err := <-late; err != ErrLateWork {
		t.Errorf("Go after the answer: %v, want ErrLateWork", err)
	}
	_ = r
	err := Go(context.Background(), func(context.Context) error { panic("outside") })
	if pe, ok := err.(*PanicError); !ok || pe.Value != "outside" {
		t.Errorf("outside an invocation: %v, want its panic", err)
	}
}
