package sizing

import (
	"math"
	"testing"
)

// TestErlangB against the formula's closed form for small N, and values
// the issue gives: about 1 in 4 at N=2 and 1.2 Erlang, under 1% from N=6.
func TestErlangB(t *testing.T) {
	closed := func(n int, a float64) float64 {
		term, sum := 1.0, 1.0
		for k := 1; k <= n; k++ {
			term *= a / float64(k)
			sum += term
		}
		return term / sum
	}
	for _, a := range []float64{0.1, 1.2, 2.28, 5, 20} {
		for n := 0; n <= 30; n++ {
			if got, want := erlangB(n, a), closed(n, a); math.Abs(got-want) > 1e-12 {
				t.Errorf("B(%d, %v) = %v, want %v", n, a, got, want)
			}
		}
	}
	if b := erlangB(2, 1.2); b < 0.24 || b > 0.25 {
		t.Errorf("B(2, 1.2) = %v, want about 1 in 4", b)
	}
	if b := erlangB(6, 1.2); b >= 0.01 {
		t.Errorf("B(6, 1.2) = %v, want under 1%%", b)
	}
	if b := erlangB(10, 5); math.Abs(b-0.018385) > 1e-6 {
		t.Errorf("B(10, 5) = %v, want 0.018385", b)
	}
	// Large N and loads, where the closed form overflows: the recurrence
	// stays in [0, 1] and falls with N.
	prev := 1.0
	for n := 1; n <= MaxN; n++ {
		b := erlangB(n, 1500)
		if math.IsNaN(b) || b < 0 || b > prev {
			t.Fatalf("B(%d, 1500) = %v after %v", n, b, prev)
		}
		prev = b
	}
	if erlangB(5, 0) != 0 || erlangB(0, 3) != 1 {
		t.Error("B at no load, or with no slot")
	}
}

func TestErlangN(t *testing.T) {
	tests := []struct {
		a, loss float64
		most    int
		want    int
	}{
		{1.2, 0.01, MaxN, 5},  // B(4) = 2.6%, B(5) = 0.6%
		{2.28, 0.01, MaxN, 7}, // a router of 3.8 slots' knee at 60%
		{0, 0.01, MaxN, 1},
		{1000, 0.01, 100, 100},
		{24, 0.01, MaxN, 35},
	}
	for _, tt := range tests {
		if got := erlangN(tt.a, tt.loss, tt.most); got != tt.want {
			t.Errorf("erlangN(%v, %v, %d) = %d, want %d", tt.a, tt.loss, tt.most, got, tt.want)
		}
		if n := erlangN(tt.a, tt.loss, tt.most); n < tt.most && (erlangB(n, tt.a) > tt.loss || n > 1 && erlangB(n-1, tt.a) <= tt.loss) {
			t.Errorf("erlangN(%v, %v) = %d is not the fewest slots within the loss", tt.a, tt.loss, n)
		}
	}
}
