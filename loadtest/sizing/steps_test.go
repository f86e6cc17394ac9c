package sizing

import (
	"math"
	"testing"
)

// steps builds a sweep from (N, throughput, p50 ms) triples; linear is
// judged against the first, as the sweep does.
func steps(rows ...[3]float64) []Step {
	var out []Step
	for _, r := range rows {
		s := Step{N: int(r[0]), Throughput: r[1], P50MS: r[2], MeanMS: r[2]}
		s.Linear = len(out) == 0 || linear(s, out[0])
		out = append(out, s)
	}
	return out
}

func TestKnee(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  int
		next  int // nextN with maxN 1600
	}{
		{"cpu-bound on 2 CPUs", steps([3]float64{1, 50, 20}, [3]float64{2, 100, 20}, [3]float64{4, 100, 40}), 2, 3},
		{"refined", steps([3]float64{1, 50, 20}, [3]float64{2, 100, 20}, [3]float64{4, 100, 40}, [3]float64{3, 100, 30}), 2, 0},
		{"io-bound, doubling", steps([3]float64{1, 25, 40}, [3]float64{2, 50, 40}, [3]float64{4, 100, 40}), 4, 8},
		{"io-bound, between 32 and 64", steps([3]float64{1, 25, 40}, [3]float64{32, 790, 40.5}, [3]float64{64, 1000, 64}), 32, 48},
		{"io-bound, close enough", steps([3]float64{1, 25, 40}, [3]float64{32, 790, 40.5}, [3]float64{64, 1000, 64}, [3]float64{48, 1000, 60}, [3]float64{40, 990, 40.4}, [3]float64{44, 1000, 55}), 40, 0},
		{"throughput alone falls short", steps([3]float64{1, 100, 10}, [3]float64{8, 500, 10}), 1, 4},
		{"nothing measured", nil, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := knee(tt.steps); got != tt.want {
				t.Errorf("knee = %d, want %d", got, tt.want)
			}
			if got := nextN(tt.steps, MaxN); got != tt.next {
				t.Errorf("nextN = %d, want %d", got, tt.next)
			}
		})
	}
	if got := nextN(steps([3]float64{1, 25, 40}, [3]float64{2, 50, 40}), 2); got != 0 {
		t.Errorf("nextN at -max-n = %d, want 0 (done)", got)
	}
	if got := nextN(steps([3]float64{1, 25, 40}, [3]float64{2, 50, 40}), 3); got != 3 {
		t.Errorf("nextN below -max-n = %d, want 3", got)
	}
}

func TestFitMemory(t *testing.T) {
	tests := []struct {
		name            string
		steps           []Step
		base, perInv    float64
		baseTol, invTol float64
	}{
		{"one step", []Step{{N: 4, BaseRSSMiB: 10, PeakRSSMiB: 30}}, 10, 5, 0, 0},
		{"a line", []Step{{N: 1, BaseRSSMiB: 10, PeakRSSMiB: 210}, {N: 2, BaseRSSMiB: 10, PeakRSSMiB: 410}, {N: 4, BaseRSSMiB: 10, PeakRSSMiB: 810}}, 10, 200, 0.01, 0.01},
		{"flat, noisy", []Step{{N: 1, BaseRSSMiB: 9, PeakRSSMiB: 11}, {N: 8, BaseRSSMiB: 9, PeakRSSMiB: 10.5}, {N: 16, BaseRSSMiB: 9, PeakRSSMiB: 11}}, 10.8, 0, 0.3, 0.01},
		{"the base is at least the smallest measured", []Step{{N: 1, BaseRSSMiB: 10, PeakRSSMiB: 10}, {N: 2, BaseRSSMiB: 10, PeakRSSMiB: 30}, {N: 4, BaseRSSMiB: 10, PeakRSSMiB: 70}}, 10, 20, 0.01, 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fitMemory(tt.steps)
			if math.Abs(f.BaseMiB-tt.base) > tt.baseTol+1e-9 || math.Abs(f.PerInvMiB-tt.perInv) > tt.invTol+1e-9 {
				t.Errorf("fit %+v, want base %.1f, per invocation %.1f", f, tt.base, tt.perInv)
			}
		})
	}
}

func TestLittle(t *testing.T) {
	if got := littleKnee(2, 40, 2); got != 40 { // 2 CPUs, 40 ms, 2 ms
		t.Errorf("littleKnee(2 CPUs, 40 ms, 2 ms) = %v, want 40", got)
	}
	if got := littleKnee(2, 20, 20); got != 2 {
		t.Errorf("littleKnee(2 CPUs, 20 ms, 20 ms) = %v, want 2", got)
	}
	tests := []struct {
		measured int
		little   float64
		want     bool
	}{{32, 40, true}, {40, 40, true}, {20, 40, false}, {60, 40, true}, {80, 40, true}, {81, 40, false}, {4, math.Inf(1), false}}
	for _, tt := range tests {
		if got := kneeAgrees(tt.measured, tt.little); got != tt.want {
			t.Errorf("kneeAgrees(%d, %v) = %v", tt.measured, tt.little, got)
		}
	}
}
