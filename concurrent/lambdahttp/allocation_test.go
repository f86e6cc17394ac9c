//go:build !race

package lambdahttp_test

import (
	"context"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// TestAllocsBuffered gates what one buffered invocation allocates, from
// payload to answer, per door: the event's decoding (its maps and
// strings), the *http.Request, the handler's own writes. The 2.0 path is
// the one BenchmarkServe measures beside lambdaurl; a payload 1.0 event
// carries each header and query parameter twice (single and multi-value).
func TestAllocsBuffered(t *testing.T) {
	tests := []struct {
		name      string
		payload   []byte
		maxAllocs float64
	}{
		{"2.0", benchEvent(t, "2.0"), 46},
		{"REST", benchEvent(t, "REST"), 74},
		{"ALB", benchEvent(t, "ALB"), 52},
		{"ALB multi", benchEvent(t, "ALB multi"), 57},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fn := lambdahttp.Handler(benchHandler(1 << 10))
			var out concurrent.Buffer
			n := testing.AllocsPerRun(200, func() {
				out.Reset()
				if err := fn(context.Background(), tc.payload, &out); err != nil {
					t.Fatal(err)
				}
			})
			if n > tc.maxAllocs {
				t.Errorf("%v allocations per invocation, want at most %v", n, tc.maxAllocs)
			}
		})
	}
}
