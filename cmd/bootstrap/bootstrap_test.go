package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// invokeRetrying sends payload, retrying while the emulator throttles (no
// /next pending yet), as Lambda's own callers would.
func invokeRetrying(t *testing.T, e *rie.Emulator, payload string) rie.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		r, err := e.Invoke(ctx, []byte(payload))
		if err != nil {
			t.Fatalf("invoke %s: %v\n%s", payload, err, e.Logs())
		}
		if !r.Throttled {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUnderEmulator runs the reference bootstrap under the AWS Runtime
// Interface Emulator in LMI mode with N=8: 8 invocations overlap (each
// waits inside the handler until all 8 are there), each gets its own
// answer, and an error and a panic come back as function errors while the
// process keeps serving.
func TestUnderEmulator(t *testing.T) {
	const n = 8
	e := startEmulator(t, rie.Options{MaxConcurrency: n, Timeout: 15 * time.Second})

	round := func(base int) {
		replies := make([]demo.Reply, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := invokeRetrying(t, e, fmt.Sprintf(`{"gather":%d,"id":%d}`, n, base+i))
				if !r.OK() || json.Unmarshal(r.Body, &replies[i]) != nil {
					t.Errorf("invocation %d: status %d, error %q, body %s", base+i, r.Status, r.FunctionError, r.Body)
				}
			})
		}
		wg.Wait()
		ids := map[string]bool{}
		for i, rep := range replies {
			if rep.Gathered != n {
				t.Errorf("invocation %d saw %d of %d invocations in flight", base+i, rep.Gathered, n)
			}
			if string(rep.ID) != fmt.Sprint(base+i) {
				t.Errorf("invocation %d got the answer for id %s", base+i, rep.ID)
			}
			if rep.RequestID == "" || ids[rep.RequestID] {
				t.Errorf("invocation %d: request ID %q empty or repeated", base+i, rep.RequestID)
			}
			ids[rep.RequestID] = true
		}
	}
	round(0)

	r := invokeRetrying(t, e, `{"fail":"asked to fail"}`)
	if r.FunctionError == "" || !bytes.Contains(r.Body, []byte(`"errorMessage":"asked to fail"`)) {
		t.Fatalf("fail: error type %q, body %s", r.FunctionError, r.Body)
	}
	r = invokeRetrying(t, e, `{"panic":true}`)
	if r.FunctionError == "" || !bytes.Contains(r.Body, []byte("demo: panic requested")) || !bytes.Contains(r.Body, []byte("stackTrace")) {
		t.Fatalf("panic: error type %q, body %s", r.FunctionError, r.Body)
	}
	r = invokeRetrying(t, e, `{"size":1048576}`)
	if !r.OK() || len(r.Body) != 1<<20 || !json.Valid(r.Body) {
		t.Fatalf("1 MiB response: status %d, error %q, %d bytes", r.Status, r.FunctionError, len(r.Body))
	}

	// The same process is still serving all 8 slots.
	round(100)
	if logs := e.Logs(); bytes.Contains(logs, []byte("Runtime.ExitError")) {
		t.Fatalf("the runtime exited:\n%s", logs)
	}
}

// TestBadConfigUnderEmulator: a bad LMIGO_ variable is reported through
// /runtime/init/error naming it, and init fails.
func TestBadConfigUnderEmulator(t *testing.T) {
	bin := rie.BuildT(t, "github.com/lmigo/lmigo/cmd/bootstrap")
	if err := rie.Supported(); err != nil {
		t.Skipf("emulator cannot run here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := rie.Start(ctx, rie.Options{
		Bootstrap: bin, MaxConcurrency: 4, Timeout: 5 * time.Second,
		Env: []string{"LMIGO_SLOTS=many", "LMIGO_SHUTDOWN_TIMEOUT=forever"},
	})
	if err == nil {
		_ = e.Stop()
		t.Fatal("init succeeded with bad LMIGO_ variables")
	}
	if !errors.Is(err, rie.ErrInit) {
		t.Fatalf("err = %v, want rie.ErrInit", err)
	}
	for _, want := range []string{"Runtime.InvalidConfiguration", "LMIGO_SLOTS", "LMIGO_SHUTDOWN_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("init failure does not mention %s:\n%v", want, err)
		}
	}
}
