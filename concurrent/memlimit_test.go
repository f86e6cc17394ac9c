package concurrent

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestMemoryLimitDerived: Run sets the soft memory limit to the fraction of
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE, once, and logs it at DEBUG; it sets
// none when GOMEMLIMIT is set, the memory size is unknown or the fraction
// is off. The setter is replaced: the test process keeps its own limit.
func TestMemoryLimitDerived(t *testing.T) {
	t.Parallel()
	echo := func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) { return ev, nil }
	tests := []struct {
		name string
		env  env
		want []int64
	}{
		{"default fraction", env{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048"}, []int64{2048 << 20 * 9 / 10}},
		{"fraction", env{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128", "LMIGO_MEMORY_LIMIT_FRACTION": "0.5"}, []int64{64 << 20}},
		{"fraction 1", env{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "LMIGO_MEMORY_LIMIT_FRACTION": "1"}, []int64{1 << 30}},
		{"GOMEMLIMIT set", env{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048", "GOMEMLIMIT": "100MiB"}, nil},
		{"GOMEMLIMIT off", env{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048", "GOMEMLIMIT": "off"}, nil},
		{"memory size unknown", env{}, nil},
		{"fraction off", env{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048", "LMIGO_MEMORY_LIMIT_FRACTION": "off"}, nil},
		{"fraction 0", env{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048", "LMIGO_MEMORY_LIMIT_FRACTION": "0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var calls []int64
			setLimit := func(limit int64) int64 {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, limit)
				return limit
			}
			core, logs := observer.New(zap.DebugLevel)
			api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
			serve(t, api, tt.env, echo, WithLogger(zap.New(core)),
				withRuntime(func(rt *Runtime) { rt.setMemoryLimit = setLimit }))
			if r := invoke(t, api, `"x"`); r.Err != nil || string(r.Body) != `"x"` {
				t.Fatalf("invoke: %s, %v", r.Body, r.Err)
			}
			mu.Lock()
			got := append([]int64(nil), calls...)
			mu.Unlock()
			if len(got) != len(tt.want) || (len(got) == 1 && got[0] != tt.want[0]) {
				t.Fatalf("SetMemoryLimit called with %v, want %v", got, tt.want)
			}
			logged := logs.FilterMessage("memory limit set").All()
			if len(logged) != len(tt.want) {
				t.Fatalf("logged %d times, want %d", len(logged), len(tt.want))
			}
			if len(logged) == 1 {
				if logged[0].Level != zap.DebugLevel || logged[0].ContextMap()["memoryLimitBytes"] != tt.want[0] {
					t.Errorf("log %v %v", logged[0].Level, logged[0].ContextMap())
				}
			}
		})
	}
}
