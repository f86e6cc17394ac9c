package main

import (
	"math"
	"strings"
	"testing"
)

// steps builds a sweep from (N, throughput, p50 ms) triples; linear is
// judged against the first, as the sweep does.
func steps(rows ...[3]float64) []sizeStep {
	var out []sizeStep
	for _, r := range rows {
		s := sizeStep{N: int(r[0]), Throughput: r[1], P50MS: r[2], MeanMS: r[2]}
		s.Linear = len(out) == 0 || linear(s, out[0])
		out = append(out, s)
	}
	return out
}

func TestKnee(t *testing.T) {
	tests := []struct {
		name  string
		steps []sizeStep
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
			if got := nextN(tt.steps, maxN); got != tt.next {
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
		steps           []sizeStep
		base, perInv    float64
		baseTol, invTol float64
	}{
		{"one step", []sizeStep{{N: 4, BaseRSSMiB: 10, PeakRSSMiB: 30}}, 10, 5, 0, 0},
		{"a line", []sizeStep{{N: 1, BaseRSSMiB: 10, PeakRSSMiB: 210}, {N: 2, BaseRSSMiB: 10, PeakRSSMiB: 410}, {N: 4, BaseRSSMiB: 10, PeakRSSMiB: 810}}, 10, 200, 0.01, 0.01},
		{"flat, noisy", []sizeStep{{N: 1, BaseRSSMiB: 9, PeakRSSMiB: 11}, {N: 8, BaseRSSMiB: 9, PeakRSSMiB: 10.5}, {N: 16, BaseRSSMiB: 9, PeakRSSMiB: 11}}, 10.8, 0, 0.3, 0.01},
		{"the base is at least the smallest measured", []sizeStep{{N: 1, BaseRSSMiB: 10, PeakRSSMiB: 10}, {N: 2, BaseRSSMiB: 10, PeakRSSMiB: 30}, {N: 4, BaseRSSMiB: 10, PeakRSSMiB: 70}}, 10, 20, 0.01, 0.01},
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

func TestRecommend(t *testing.T) {
	tests := []struct {
		name        string
		knee        float64
		cpus, vcpus int
		mem         memFit
		n           int
		perVCPU     float64
		ratio       int
		limitedBy   string
	}{
		{"cpu-bound", 2, 2, 2, memFit{10, 0.1}, 2, 1, 2, "cpu"},
		{"io-bound", 40, 2, 2, memFit{10, 0.1}, 40, 20, 2, "cpu"},
		{"io-bound for 8 vCPUs", 40.9, 2, 8, memFit{10, 0.1}, 160, 20, 2, "cpu"},
		{"memory sets the ratio", 40, 2, 2, memFit{10, 100}, 40, 20, 4, "cpu"},
		// 40 x 200 MiB = 8000 MiB: 4 GiB per vCPU holds 6144 MiB, 8 GiB 12288.
		{"200 MiB each", 40, 2, 2, memFit{10, 200}, 40, 20, 8, "cpu"},
		// 12288 - 10 = 12278 MiB holds 30 of 400 MiB.
		{"memory-limited", 40, 2, 2, memFit{10, 400}, 30, 15, 8, "memory"},
		{"at least one", 0.9 + 0.2, 2, 2, memFit{10, 0}, 2, 1, 2, "cpu"},
		{"capped at 1600", 2000, 1, 2, memFit{10, 0}, 1600, 800, 2, "cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := recommend(tt.knee, tt.cpus, tt.vcpus, tt.mem)
			if err != nil {
				t.Fatal(err)
			}
			if r.N != tt.n || r.PerVCPU != tt.perVCPU || r.Ratio != tt.ratio || r.LimitedBy != tt.limitedBy {
				t.Errorf("got N=%d, %.1f per vCPU, %d GiB per vCPU, limited by %s; want N=%d, %.1f, %d, %s",
					r.N, r.PerVCPU, r.Ratio, r.LimitedBy, tt.n, tt.perVCPU, tt.ratio, tt.limitedBy)
			}
			if r.MemorySizeMB != r.Ratio*tt.vcpus*1024 {
				t.Errorf("MemorySize %d MB, want %d GiB x %d vCPUs", r.MemorySizeMB, r.Ratio, tt.vcpus)
			}
			if r.NeedMiB > (1-memoryRoom)*float64(r.MemorySizeMB) {
				t.Errorf("N=%d needs %.0f MiB, more than %.0f%% of %d MB", r.N, r.NeedMiB, 100*(1-memoryRoom), r.MemorySizeMB)
			}
		})
	}
	if _, err := recommend(40, 2, 2, memFit{10, 20000}); err == nil || !strings.Contains(err.Error(), "one invocation needs") {
		t.Errorf("an invocation larger than the largest environment: %v", err)
	}
	for ratio, want := range map[int]int{2: 15, 4: 30, 8: 61} {
		if got := memoryBound(memFit{10, 200}, ratio, 2); got != want {
			t.Errorf("memoryBound(10 MiB + 200 MiB each, %d GiB per vCPU, 2 vCPUs) = %d, want %d", ratio, got, want)
		}
	}
	if got := memoryBound(memFit{10, 0}, 2, 2); got != maxN {
		t.Errorf("memoryBound with no memory per invocation = %d, want %d", got, maxN)
	}
	if _, err := recommend(0, 2, 2, memFit{}); err == nil {
		t.Error("no knee: no error")
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
	}{{32, 40, true}, {40, 40, true}, {20, 40, false}, {60, 40, true}, {61, 40, false}, {4, math.Inf(1), false}}
	for _, tt := range tests {
		if got := kneeAgrees(tt.measured, tt.little); got != tt.want {
			t.Errorf("kneeAgrees(%d, %v) = %v", tt.measured, tt.little, got)
		}
	}
}

// TestSizeExplains: the two sentences carry the figures a user checks the
// recommendation by, and the SAM parameters match it.
func TestSizeExplains(t *testing.T) {
	p := &sizeProfile{VCPUs: 2, MachineCPUs: 2, WallMS: 40, CPUMS: 2, WaitShare: 0.95, KneeN: 32, FunctionKnee: 40,
		DriverCPUMS: 0.5, LittleKnee: 40, LittleHere: 32, HadCPUs: 2, BaseMiB: 10, MemPerInvMiB: 200}
	r, err := recommend(p.FunctionKnee, p.MachineCPUs, p.VCPUs, p.fit())
	if err != nil {
		t.Fatal(err)
	}
	p.rec = r
	s := sizeSentences(p)
	for _, want := range []string{"40.0ms of wall time", "2.00ms of it CPU", "95% waiting", "above N=32", "N=40 for the function alone", "20 per CPU", "N=40."} {
		if !strings.Contains(s[0], want) {
			t.Errorf("CPU sentence lacks %q: %s", want, s[0])
		}
	}
	for _, want := range []string{"10 MiB plus 200.0 MiB per invocation", "N=40 needs 8010 MiB", "8 GiB per vCPU (16 GiB for 2 vCPUs)", "4 GiB per vCPU does not"} {
		if !strings.Contains(s[1], want) {
			t.Errorf("memory sentence lacks %q: %s", want, s[1])
		}
	}
	if got := samParams(r); got != "MaxConcurrency=40 MemoryGiBPerVCpu=8 MemorySize=16384" {
		t.Errorf("SAM parameters %q", got)
	}
}
