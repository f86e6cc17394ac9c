package sizing

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestRecommend(t *testing.T) {
	tests := []struct {
		name      string
		knee      float64 // for the vCPUs sized for
		vcpus     int
		mem       memFit
		n         int
		perVCPU   float64
		ratio     int
		limitedBy string
	}{
		// 58 µs of CPU in 110 µs on 2 vCPUs: a knee of 3.8, 2.3 Erlangs
		// at 60%: 25% turned away at N=2, under 1% from N=7.
		{"a router answering from memory", 3.8, 2, memFit{10, 0.1}, 7, 3.5, 2, "loss"},
		// 1.2 Erlangs want 5 slots; 4 busy stretch 20 ms to 40 ms.
		{"cpu-bound", 2, 2, memFit{10, 0.1}, 4, 2, 2, "latency"},
		{"io-bound", 40, 2, memFit{10, 0.1}, 40, 20, 2, "cpu"},
		{"io-bound for 8 vCPUs", 163.6, 8, memFit{10, 0.1}, 164, 20.5, 2, "cpu"},
		{"memory sets the ratio", 40, 2, memFit{10, 100}, 40, 20, 4, "cpu"},
		// 40 x 200 MiB = 8000 MiB: 4 GiB per vCPU holds 6144 MiB, 8 GiB 12288.
		{"200 MiB each", 40, 2, memFit{10, 200}, 40, 20, 8, "cpu"},
		// 12288 - 10 = 12278 MiB holds 30 of 400 MiB.
		{"memory-limited", 40, 2, memFit{10, 400}, 30, 15, 8, "memory"},
		{"at least one", 0.4, 2, memFit{10, 0}, 1, 0.5, 2, "latency"},
		{"capped at 1600", 2000, 2, memFit{10, 0}, 1600, 800, 2, "cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := recommend(tt.knee, tt.vcpus, DefaultScaleAt, tt.mem)
			if err != nil {
				t.Fatal(err)
			}
			if r.N != tt.n || r.PerVCPU != tt.perVCPU || r.Ratio != tt.ratio || r.LimitedBy != tt.limitedBy {
				t.Errorf("got N=%d, %.1f per vCPU, %d GiB per vCPU, limited by %s; want N=%d, %.1f, %d, %s (%+v)",
					r.N, r.PerVCPU, r.Ratio, r.LimitedBy, tt.n, tt.perVCPU, tt.ratio, tt.limitedBy, r)
			}
			if r.MemorySizeMB != r.Ratio*tt.vcpus*1024 {
				t.Errorf("MemorySize %d MB, want %d GiB x %d vCPUs", r.MemorySizeMB, r.Ratio, tt.vcpus)
			}
			if r.NeedMiB > (1-memoryRoom)*float64(r.MemorySizeMB) {
				t.Errorf("N=%d needs %.0f MiB, more than %.0f%% of %d MB", r.N, r.NeedMiB, 100*(1-memoryRoom), r.MemorySizeMB)
			}
			if r.Loss != erlangB(r.N, DefaultScaleAt*tt.knee) || r.LimitedBy == "loss" && r.Loss > lossTarget {
				t.Errorf("loss %v at N=%d", r.Loss, r.N)
			}
			if r.N < min(r.CPUN, r.LatencyN, r.MemoryN) || r.N > max(r.CPUN, r.LossN) {
				t.Errorf("N=%d outside the CPUs' %d and the loss's %d (%+v)", r.N, r.CPUN, r.LossN, r)
			}
		})
	}
	if _, err := recommend(40, 2, DefaultScaleAt, memFit{10, 20000}); err == nil || !strings.Contains(err.Error(), "one invocation needs") {
		t.Errorf("an invocation larger than the largest environment: %v", err)
	}
	for ratio, want := range map[int]int{2: 15, 4: 30, 8: 61} {
		if got := memoryBound(memFit{10, 200}, ratio, 2); got != want {
			t.Errorf("memoryBound(10 MiB + 200 MiB each, %d GiB per vCPU, 2 vCPUs) = %d, want %d", ratio, got, want)
		}
	}
	if got := memoryBound(memFit{10, 0}, 2, 2); got != MaxN {
		t.Errorf("memoryBound with no memory per invocation = %d, want %d", got, MaxN)
	}
	if _, err := recommend(0, 2, DefaultScaleAt, memFit{}); err == nil {
		t.Error("no knee: no error")
	}
}

// routerSteps is a sweep of a router answering from memory: 58 µs of CPU
// in 110 µs of wall time, the load test's CPU beside it, a knee of 3.8
// on 2 CPUs for the function alone.
func routerSteps() []Step {
	step := func(n int, x float64, lin bool) Step {
		return Step{N: n, Invocations: int64(3 * x), Throughput: x, MeanMS: 0.110, P50MS: 0.110, P99MS: 0.4 * float64(n),
			CPUMS: 0.058, DriverCPUMS: 0.05, BaseRSSMiB: 12, PeakRSSMiB: 12, Linear: lin}
	}
	return []Step{step(1, 9000, true), step(2, 16000, true), step(4, 18000, false), step(3, 18000, false)}
}

// TestSizeLossSystem: size recommends the N that keeps the loss small at
// the load the capacity provider scales at, not the CPUs' knee rounded
// down per vCPU; the sentences say so and the SAM parameters follow.
func TestSizeLossSystem(t *testing.T) {
	p := &Profile{VCPUs: 2, MachineCPUs: 2, ScaleAt: DefaultScaleAt, Steps: routerSteps()}
	if err := p.summarize(func(int, float64) (*Check, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	n := p.PerExecutionEnvironmentMaxConcurrency
	if n < 5 || erlangB(n, p.Offered) > lossTarget || p.LimitedBy != "loss" {
		t.Fatalf("N=%d, limited by %s: at %.1f Erlangs it turns away %.0f%%; want the fewest slots within 1%%", n, p.LimitedBy, p.Offered, 100*erlangB(n, p.Offered))
	}
	for _, w := range []string{"Erlang's loss formula", "the load the capacity provider scales at (60% CPU)", "so N="} {
		if !strings.Contains(p.Sentences[0], w) {
			t.Errorf("the sentence lacks %q: %s", w, p.Sentences[0])
		}
	}
	if !strings.HasPrefix(p.SAM, "MaxConcurrency="+strconv.Itoa(n)+" ") {
		t.Errorf("SAM %q does not follow N=%d", p.SAM, n)
	}
}

// TestSizeChecksAgain: an N that fails its check for throttles is never
// printed as the answer: the one above it is checked, and the N that
// held is the answer, its SAM parameters with it; when none holds, the
// report says plainly what to use.
func TestSizeChecksAgain(t *testing.T) {
	// An io-bound function: 40 ms, 2 ms of CPU, a knee of 40 on 2 CPUs.
	step := func(n int, x float64, lin bool) Step {
		return Step{N: n, Invocations: int64(3 * x), Throughput: x, MeanMS: 40, P50MS: 40, P99MS: 45, CPUMS: 2,
			BaseRSSMiB: 10, PeakRSSMiB: 10 + 0.1*float64(n), Linear: lin}
	}
	steps := []Step{step(1, 25, true), step(2, 50, true), step(4, 100, true), step(8, 200, true), step(16, 400, true),
		step(32, 800, true), step(64, 900, false), step(48, 950, false), step(40, 990, true), step(44, 1000, false)}
	tests := []struct {
		name      string
		throttled map[int]int64 // per N checked; absent: none
		p99       map[int]float64
		checked   []int
		n         int
		confirmed bool
		plainly   string
	}{
		{"holds at once", nil, nil, []int{40}, 40, true, ""},
		{"a size up", map[int]int64{40: 500}, nil, []int{40, 50}, 50, true, ""},
		{"none holds", map[int]int64{40: 500, 50: 500, 62: 500}, nil, []int{40, 50, 62}, 62, false, "No N held its check on this machine: at N=62, 500 throttled"},
		{"p99 over, once more", nil, map[int]float64{40: 100}, []int{40, 40}, 40, false, "p99 100.0ms over the 45.0ms measured"},
		{"a busy machine, once more", map[int]int64{40: 500}, nil, []int{40, 40}, 40, false, "other work took 1.0 of the 2 CPUs during the check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Profile{VCPUs: 2, MachineCPUs: 2, ScaleAt: DefaultScaleAt, Steps: steps}
			var checked []int
			err := p.summarize(func(n int, rate float64) (*Check, error) {
				checked = append(checked, n)
				p99 := 30.0
				if v, ok := tt.p99[n]; ok {
					p99 = v
				}
				c := &Check{N: n, Rate: rate, Seconds: 5, Answered: int64(5 * rate), Throttles: tt.throttled[n], P99MS: p99}
				if strings.HasPrefix(tt.name, "a busy machine") {
					c.OtherCPUs = 1
				}
				return c, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(checked) != len(tt.checked) || checked[0] != tt.checked[0] || checked[len(checked)-1] != tt.checked[len(tt.checked)-1] {
				t.Errorf("checked N=%v, want %v", checked, tt.checked)
			}
			if p.PerExecutionEnvironmentMaxConcurrency != tt.n || p.Confirmed != tt.confirmed {
				t.Errorf("N=%d, confirmed %v; want N=%d, %v", p.PerExecutionEnvironmentMaxConcurrency, p.Confirmed, tt.n, tt.confirmed)
			}
			if !strings.Contains(p.SAM, "MaxConcurrency="+strconv.Itoa(tt.n)+" ") {
				t.Errorf("SAM %q does not follow N=%d", p.SAM, tt.n)
			}
			if !strings.Contains(p.Unconfirmed, tt.plainly) || (tt.plainly == "") != (p.Unconfirmed == "") {
				t.Errorf("unconfirmed %q, want it to say %q", p.Unconfirmed, tt.plainly)
			}
			head := strings.Join(sizeLines(p).head, "\n")
			held := "it held its check here at N=" + strconv.Itoa(tt.n)
			if len(tt.checked) > 1 { // a check failed before: say both
				held = "it held its second check here at N=50, after the first, at N=40, did not hold"
			}
			if tt.confirmed && !strings.Contains(head, held) ||
				!tt.confirmed && (!strings.Contains(head, "NOT confirmed") || !strings.Contains(head, p.Unconfirmed)) {
				t.Errorf("the report's head does not say what held:\n%s", head)
			}
			if c := p.Check; c == nil || c.N != tt.n || c.Holds != tt.confirmed {
				t.Errorf("the last check %+v is not the one the answer rests on", c)
			}
			// The CPUs' N is the model's, not the one a check raised it to.
			if why := cpuSentence(p); strings.Contains(why, "CPUs' N=") && !strings.Contains(why, "the CPUs' N="+strconv.Itoa(tt.checked[0])+",") &&
				!strings.Contains(why, "the CPUs' N="+strconv.Itoa(tt.checked[0])+".") {
				t.Errorf("the CPUs' N is not the model's N=%d: %s", tt.checked[0], why)
			}
		})
	}
}

// TestCheckJudge: the loss a check allows is Erlang B's or the target's,
// with chance; beyond it the check fails and says why.
func TestCheckJudge(t *testing.T) {
	c := Check{N: 7, Rate: 20000, Answered: 99000, Throttles: 1000, P99MS: 1, PredictedP99MS: 2}
	c.judge(0.114) // 2.28 Erlangs: B(7) = 0.65%
	if want := int64(math.Ceil(1000 + 3*math.Sqrt(1000) + 1)); c.AllowedThrottles != want || !c.Holds {
		t.Errorf("allowed %d (want %d), holds %v: %s", c.AllowedThrottles, want, c.Holds, c.Why)
	}
	c.Throttles = 2000
	c.judge(0.114)
	if c.Holds || !c.lossHigh || !strings.Contains(c.Why, "2000 throttled") {
		t.Errorf("2%% throttled holds: %+v", c)
	}
	c = Check{N: 2, Rate: 10000, Answered: 80000, Throttles: 20000}
	c.judge(0.12) // 1.2 Erlangs at N=2: B = 25%
	if !c.Holds {
		t.Errorf("the loss Erlang B predicts fails: %s", c.Why)
	}
	c = Check{N: 2, Rate: 10, Answered: 50, Wrong: 1}
	if c.judge(1); c.Holds || !strings.Contains(c.Why, "went wrong") {
		t.Errorf("a wrong answer holds: %+v", c)
	}
}

// TestSizeRestsOn: the report says what its figures rest on, and relates
// its N per vCPU to docs/tuning.md's 32 so that 211 per vCPU for a 10 ms
// stub does not read as a contradiction.
func TestSizeRestsOn(t *testing.T) {
	step := func(n int, x float64, lin bool) Step {
		return Step{N: n, Invocations: int64(3 * x), Throughput: x, MeanMS: 10, P50MS: 10, P99MS: 11, CPUMS: 0.0474,
			BaseRSSMiB: 10, PeakRSSMiB: 10 + 0.01*float64(n), Linear: lin}
	}
	p := &Profile{VCPUs: 2, MachineCPUs: 2, Steps: []Step{step(1, 100, true), step(256, 25000, true), step(512, 30000, false), step(384, 30000, false)}}
	if err := p.summarize(func(int, float64) (*Check, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(sizeLines(p).tail, "\n")
	for _, w := range []string{"rest on", "stub", "211 per vCPU", "docs/tuning.md", "32 per vCPU", "64 per vCPU"} {
		if !strings.Contains(text, w) {
			t.Errorf("the report lacks %q:\n%s", w, text)
		}
	}
	if p.RestsOn == "" {
		t.Error("no restsOn in the JSON")
	}
}

// TestUnconfirmedSays: when no N held, the report says why in the terms
// of what went wrong: the harness, a busy machine, the bounds.
func TestUnconfirmedSays(t *testing.T) {
	p := &Profile{MachineCPUs: 2, CPUMS: 0.1, DriverCPUMS: 0.6, rec: recommendation{LatencyN: 8, MemoryN: 1600}}
	light := unconfirmed(p, Check{N: 8, Why: "x", lossHigh: true})
	p.DriverCPUMS = 0.1
	busy := unconfirmed(p, Check{N: 8, Why: "x", lossHigh: true, OtherCPUs: 1})
	bound := unconfirmed(p, Check{N: 8, Why: "x", lossHigh: true})
	wrong := unconfirmed(p, Check{N: 4, Why: "x", Wrong: 2})
	for got, want := range map[string]string{light: "they, not the function, set the throttles", busy: "size again on a quiet machine",
		bound: "as far as the latency and memory bounds go", wrong: "its answers went wrong"} {
		if !strings.Contains(got, want) || !strings.HasPrefix(got, "No N held its check on this machine: at N=") {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// TestCPUSentenceReads: the sentence on the knee is grammatical: what
// stopped growing and what started to grow, above which N.
func TestCPUSentenceReads(t *testing.T) {
	p := &Profile{VCPUs: 2, MachineCPUs: 2, ScaleAt: DefaultScaleAt, Steps: routerSteps()}
	if err := p.summarize(func(int, float64) (*Check, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if want := "throughput stopped growing, or latency started to grow, above N=2"; !strings.Contains(p.Sentences[0], want) {
		t.Errorf("the sentence lacks %q: %s", want, p.Sentences[0])
	}
}

// TestSharesAgreeWithCounts: a share shown beside counts agrees with
// them: 108 of 7551 is 1.4%, not the "1%" that read as below the 103
// allowed.
func TestSharesAgreeWithCounts(t *testing.T) {
	c := Check{N: 12, Rate: 1510, Seconds: 5, Answered: 7443, Throttles: 108}
	c.judge(0.46)
	if want := "108 throttled (1.4% of 7551 attempts), more than the 103"; !strings.Contains(c.Why, want) {
		t.Errorf("why %q, want %q", c.Why, want)
	}
	for v, want := range map[float64]string{0.0278: "2.8%", 0.0143: "1.4%", 0.0009: "0.09%", 0.25: "25%", 0.096: "9.6%"} {
		if got := fmtShare(v); got != want {
			t.Errorf("fmtShare(%v) = %q, want %q", v, got, want)
		}
	}
}
