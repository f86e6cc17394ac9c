package report

import (
	"time"

	"github.com/lmigo/lmigo/loadtest/show"
)

// cell is m[key] formatted, or "-" when the metric is absent.
func cell(m map[string]float64, key string, format func(float64) string) string {
	if v, ok := m[key]; ok {
		return format(v)
	}
	return "-"
}

// fmtLatencyDelta writes a difference of microseconds with its sign.
func fmtLatencyDelta(v float64) string {
	if v < 0 {
		return "-" + show.Latency(-v)
	}
	return "+" + show.Latency(v)
}

func abs(v float64) float64 { return max(v, -v) }

func fromUS(v float64) time.Duration { return time.Duration(v * 1e3) }
