//go:build !race

package rapitest

import "testing"

// The per-request bookkeeping must not allocate.
func TestAllocations(t *testing.T) {
	g := newIDs()
	id := formatID(g.request, 12345)
	var c counters
	tests := []struct {
		name string
		max  float64
		fn   func()
	}{
		{"parseID", 0, func() { _, _ = parseID(g.request, id) }},
		{"formatID", 1, func() { _ = formatID(g.request, 12345) }}, // the string itself
		{"raiseTo", 0, func() { raiseTo(&c.maxOutstanding, c.outstanding.Add(1)) }},
		{"snapshot", 0, func() { _ = c.snapshot() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(100, tt.fn); got > tt.max {
				t.Errorf("%v allocs per run, want <= %v", got, tt.max)
			}
		})
	}
}
