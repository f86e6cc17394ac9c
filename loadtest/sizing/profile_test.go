package sizing

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/show"
)

// TestSizeSummarize: from the steps of a sweep to the recommendation, the
// arithmetic of size without a process: the knee scaled to the function
// alone, never past Little's law for it; for a CPU-bound function the
// loss at the scaling load asks for more slots than CPUs, up to the
// latency bound.
func TestSizeSummarize(t *testing.T) {
	step := func(n int, x, p50, cpu, drv, others float64, lin bool) Step {
		return Step{N: n, Invocations: int64(x * 3), Throughput: x, MeanMS: p50, P50MS: p50, P99MS: 2 * p50, CPUMS: cpu, DriverCPUMS: drv,
			OtherCPUs: others, BaseRSSMiB: 10, PeakRSSMiB: 10 + 0.1*float64(n), Linear: lin}
	}
	tests := []struct {
		name        string
		steps       []Step
		n           int
		perVCPU     float64
		ratio       int
		functionMax float64 // the knee for the function alone, at most
	}{
		{"cpu-bound", []Step{step(1, 40, 25, 21, 1.3, 0, true), step(2, 76, 25.6, 21, 1.3, 0, true), step(4, 80, 49, 21, 1.3, 0, false), step(3, 75, 37, 21, 1.3, 0, false)},
			4, 2, 2, 2.4},
		// The CPUs 92% busy at the knee of 24 (Little: 26): 24 × (1 + 0.92/3) = 31.4.
		{"io-bound", []Step{step(1, 24, 41.6, 2.4, 0.8, 0, true), step(16, 380, 42, 2.4, 0.8, 0, true), step(32, 500, 64, 2.4, 0.8, 0, false), step(24, 560, 43, 2.4, 0.8, 0, true), step(28, 560, 50, 2.4, 0.8, 0, false)},
			31, 15.5, 2, 32},
		// The load test's CPU as large as the function's would scale the
		// knee to 48: Little's law for the function alone caps it at 34.7.
		{"io-bound, capped", []Step{step(1, 24, 41.6, 2.4, 2.4, 0, true), step(16, 380, 42, 2.4, 2.4, 0, true), step(32, 500, 64, 2.4, 2.4, 0, false), step(24, 560, 43, 2.4, 2.4, 0, true), step(28, 560, 50, 2.4, 2.4, 0, false)},
			35, 17.5, 2, 34.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Profile{VCPUs: 2, MachineCPUs: 2, Steps: tt.steps}
			checked := 0
			err := p.summarize(func(n int, rate float64) (*Check, error) { checked = n; return nil, nil })
			if err != nil {
				t.Fatal(err)
			}
			if p.PerExecutionEnvironmentMaxConcurrency != tt.n || p.ConcurrencyPerVCpu != tt.perVCPU || p.ExecutionEnvironmentMemoryGiBPerVCpu != tt.ratio {
				t.Errorf("N=%d, %v per vCPU, %d GiB per vCPU; want N=%d, %v, %d (knee %d, function alone %.1f, Little %.1f)",
					p.PerExecutionEnvironmentMaxConcurrency, p.ConcurrencyPerVCpu, p.ExecutionEnvironmentMemoryGiBPerVCpu, tt.n, tt.perVCPU, tt.ratio, p.KneeN, p.FunctionKnee, p.LittleKnee)
			}
			if p.FunctionKnee > tt.functionMax || p.FunctionKnee > p.LittleKnee+1e-9 {
				t.Errorf("function alone N=%.1f, past Little's law's %.1f", p.FunctionKnee, p.LittleKnee)
			}
			if checked != tt.n {
				t.Errorf("checked at N=%d, want the recommended %d", checked, tt.n)
			}
		})
	}
}

// TestSizeNoCPU: steps in which the function's processes used no CPU
// the kernel counted (a wrapper measured alone did that) give no
// recommendation but one sentence that says why, and whatever the steps,
// the profile's JSON holds no +Inf or NaN.
func TestSizeNoCPU(t *testing.T) {
	step := func(n int, cpu float64) Step {
		return Step{N: n, Invocations: 100, Throughput: 24 * float64(n), P50MS: 41, P99MS: 43, CPUMS: cpu, BaseRSSMiB: 1.7, PeakRSSMiB: 1.7, Linear: true}
	}
	p := &Profile{VCPUs: 2, MachineCPUs: 2, Steps: []Step{step(1, 0), step(2, 0)}}
	err := p.summarize(func(int, float64) (*Check, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "no CPU time") || strings.Count(strings.TrimSpace(err.Error()), ". ") > 0 {
		t.Errorf("err %v, want one sentence saying the function used no CPU time", err)
	}
	if p.PerExecutionEnvironmentMaxConcurrency != 0 {
		t.Errorf("recommended N=%d from steps without CPU", p.PerExecutionEnvironmentMaxConcurrency)
	}
	if _, err := json.Marshal(p); err != nil {
		t.Errorf("JSON of the profile: %v", err)
	}
	var out bytes.Buffer
	Print(&out, p)
	if strings.Contains(out.String(), "SAM parameters") || strings.Contains(out.String(), "PerExecutionEnvironmentMaxConcurrency 0") {
		t.Errorf("printed a recommendation without one:\n%s", out.String())
	}
	if md := Markdown(p); bytes.Contains(md, []byte("sam deploy")) {
		t.Errorf("size.md gives SAM parameters without a recommendation:\n%s", md)
	}
}

// TestSizeSameBinaryTwice: the steps of two sizings of one function on
// one machine (testdata, from size -json) give the same N, or the next
// step of the sweep, from one model; the sentence names its figures.
// The first run's knee sat 1.55 times Little's law's, the second's 1.07:
// a threshold at 1.5 once gave N=4 and N=12.
func TestSizeSameBinaryTwice(t *testing.T) {
	var ns []int
	var limited []string
	for _, f := range []string{"testdata/size-paramcache-run1.json", "testdata/size-paramcache-run2.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			VCPUs       int    `json:"vcpus"`
			MachineCPUs int    `json:"machineCpus"`
			Steps       []Step `json:"steps"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		p := &Profile{VCPUs: rec.VCPUs, MachineCPUs: rec.MachineCPUs, Steps: rec.Steps}
		if err := p.summarize(func(int, float64) (*Check, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		ns, limited = append(ns, p.PerExecutionEnvironmentMaxConcurrency), append(limited, p.LimitedBy)
		t.Logf("%s: N=%d: %s", f, ns[len(ns)-1], p.Sentences[0])
		for _, w := range []string{"Little's law", show.Millis(p.CPUMS) + " of it CPU", show.Millis(p.DriverCPUMS) + " of CPU per invocation beside"} {
			if !strings.Contains(p.Sentences[0], w) {
				t.Errorf("%s: the sentence does not name %q: %s", f, w, p.Sentences[0])
			}
		}
	}
	if d := ns[0] - ns[1]; d < -1 || d > 1 || limited[0] != limited[1] {
		t.Errorf("the same function sized twice: N=%d (limited by %s) and N=%d (limited by %s)", ns[0], limited[0], ns[1], limited[1])
	}
}
