package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
)

func TestPanicWorkloadRefused(t *testing.T) {
	s := DefaultSettings()
	sc, err := NewScenario(s, Row{Workload: "mix-panic", N: 2, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	l := beginRun(t.Context(), s, &sc, target.Runtime{Name: target.AWSLambdaGo, Binary: "/nonexistent"}, 1, false)
	r := l.finish(t.Context())
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "exits on a panic") {
		t.Fatalf("problems %q, want the workload refused before anything starts", r.Problems)
	}
}

// TestLatencyMetrics: the percentiles of a run, in µs.
func TestLatencyMetrics(t *testing.T) {
	h := load.NewHist()
	for v := 1; v <= 1000; v++ {
		if err := h.RecordValue(int64(v) * int64(time.Microsecond)); err != nil {
			t.Fatal(err)
		}
	}
	m := map[string]float64{}
	latencyMetrics(h, m)
	for key, want := range map[string]float64{P50: 500, P90: 900, P99: 990, P999: 999, MaxLatency: 1000} {
		if got := m[key]; got < want*0.999 || got > want*1.001 {
			t.Errorf("%s = %.3f µs, want %v within 0.1%%", key, got, want)
		}
	}
}
