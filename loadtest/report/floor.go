package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// FloorCheck is one target of a runtime against the floor (or, for
// throughput, against itself at a smaller N), checked on the medians of
// one run of the load test.
type FloorCheck struct {
	Runtime  string  `json:"runtime"`
	Scenario string  `json:"scenario"`
	What     string  `json:"what"`
	Value    float64 `json:"value"`
	Base     float64 `json:"base"` // the floor's figure, or the runtime's at N=64
	Limit    float64 `json:"limit"`
	Met      bool    `json:"met"`

	format func(float64) string
	base   string // what Base is, for the line
}

// Floor targets: how far lmigo may be from the floor.
const (
	floorCPUTiny  = 1.2        // tiny CPU per invocation, at N=1, 64, 512 and 1600
	floorCPUSize  = 2.0        // CPU per invocation of a 1 MiB and a 6 MiB response, N=1
	floorCPUBytes = 1.5        // the same for a 6 MiB response of a lambda.Handler (lmigo-handler)
	floorReady    = 1.2        // exec to N polls at N=1600
	floorRSSSlack = 16         // MiB above the floor's peak RSS, tiny N=1600 and wait:D
	floorRSSSlot  = 4.0 / 1024 // MiB more a slot: a typed handler's stack is 8 KiB, the floor's 4
	tputKeep      = 0.9        // tiny throughput at N=1600 against N=64, times the floor's own N=1600/N=64 when below 1

	// Below saturation (the open model; belowSatSet).
	belowCPU   = 1.1  // CPU per invocation, tiny and wait:D
	belowP99US = 1000 // µs above the floor's p99, wait:D
	belowP50   = 1.1  // latency rows (tiny): p50 against the floor's
	belowP99   = 1.3  // latency rows (tiny): p99 against the floor's
)

// What the latency rows' targets say (latencyTarget), and the memory
// target's, the same at saturation and below it.
const (
	whatRSS = "peak RSS <= floor + 16 MiB + 4 KiB x N"
	whatP50 = "p50 <= 1.1x floor"
	whatP99 = "p99 <= 1.3x floor"
)

// floorTargets checks the targets against the floor for every runtime of
// lmigo in rep, on the scenarios of rep that have them; none without the
// floor's figures. At saturation (the closed model) they are read on the
// scenarios of the standard set; below it (the open model) on every tiny
// and wait:D scenario, and the latency rows' p50 and p99 on every tiny
// one. lmigo-handler, a lambda.Handler of the user's own, has targets of
// its own: the 6 MiB CPU against the floor, and the peak RSS against the
// same handler under aws-lambda-go.
func floorTargets(rep *Report) []FloorCheck {
	var out []FloorCheck
	for _, rt := range rep.Runtimes {
		if !strings.HasPrefix(rt.Name, target.Lmigo) {
			continue
		}
		j := &floorJudge{rep: rep, rt: rt.Name}
		if rt.Name == target.LmigoHandler {
			j.vsFloor("size:6MiB", 1, bench.CPUPerInv, "CPU/inv <= 1.5x floor", floorCPUBytes, 0, show.Latency)
			j.vs(target.AWSLambdaGoHandler, j.find("size:6MiB", 1), bench.PeakRSS, "peak RSS <= "+target.AWSLambdaGoHandler+"'s", 1, 0, show.MiB)
		} else {
			j.belowSaturation()
			j.saturation()
			j.throughput()
		}
		out = append(out, j.out...)
	}
	return out
}

// floorJudge checks the targets of one runtime of lmigo in rep.
type floorJudge struct {
	rep *Report
	rt  string
	out []FloorCheck
}

// find is the scenario of rep of workload wl at N=n in the closed model;
// nil when rep has none.
func (j *floorJudge) find(wl string, n int) *ScenarioReport {
	for i := range j.rep.Scenarios {
		if sc := j.rep.Scenarios[i].Scenario; sc.Workload == wl && sc.N == n && sc.Model == load.ModelClosed {
			return &j.rep.Scenarios[i]
		}
	}
	return nil
}

// vs checks the runtime against base on sr: its key at most factor x
// base's + plus; nothing without sr or base's figure.
func (j *floorJudge) vs(base string, sr *ScenarioReport, key, what string, factor, plus float64, format func(float64) string) {
	if sr == nil {
		return
	}
	fl, ok := sr.Medians[base][key]
	if !ok {
		return
	}
	v, ok := sr.Medians[j.rt][key]
	if !ok {
		v = math.NaN()
	}
	limit := fl*factor + plus
	j.out = append(j.out, FloorCheck{Runtime: j.rt, Scenario: scenarioLabel(sr.Scenario), What: what,
		Value: v, Base: fl, Limit: limit, Met: ok && v <= limit, format: format, base: base})
}

// vsFloor checks the runtime against the floor on the closed scenario of
// wl at N=n.
func (j *floorJudge) vsFloor(wl string, n int, key, what string, factor, plus float64, format func(float64) string) {
	j.vs(target.Floor, j.find(wl, n), key, what, factor, plus, format)
}

// belowSaturation checks the open model's scenarios: CPU on tiny and
// wait:D, the latency rows' p50 and p99, and wait:D's memory and p99.
func (j *floorJudge) belowSaturation() {
	for i := range j.rep.Scenarios {
		sr := &j.rep.Scenarios[i]
		sc := sr.Scenario
		if sc.Model != load.ModelOpen {
			continue
		}
		wait := strings.HasPrefix(sc.Workload, "wait:")
		if sc.Workload == "tiny" || wait {
			j.vs(target.Floor, sr, bench.CPUPerInv, "CPU/inv <= 1.1x floor", belowCPU, 0, show.Latency)
		}
		if latencyRowsOf(sc) {
			j.vs(target.Floor, sr, bench.P50, whatP50, belowP50, 0, show.Latency)
			j.vs(target.Floor, sr, bench.P99, whatP99, belowP99, 0, show.Latency)
		}
		if wait {
			j.vs(target.Floor, sr, bench.PeakRSS, whatRSS, 1, floorRSSSlack+floorRSSSlot*float64(sc.N), show.MiB)
			j.vs(target.Floor, sr, bench.P99, "p99 <= floor + 1 ms", 1, belowP99US, show.Latency)
		}
	}
}

// saturation checks the closed model's scenarios of the standard set.
func (j *floorJudge) saturation() {
	for _, n := range []int{1, 64, 512, 1600} {
		j.vsFloor("tiny", n, bench.CPUPerInv, "CPU/inv <= 1.2x floor", floorCPUTiny, 0, show.Latency)
	}
	j.vsFloor("tiny", 1600, bench.PeakRSS, whatRSS, 1, floorRSSSlack+floorRSSSlot*1600, show.MiB)
	j.vsFloor("tiny", 1600, bench.Ready, "exec to N polls <= 1.2x floor", floorReady, 0, show.MS)
	j.vsFloor("size:1MiB", 1, bench.CPUPerInv, "CPU/inv <= 2x floor", floorCPUSize, 0, show.Latency)
	j.vsFloor("size:6MiB", 1, bench.CPUPerInv, "CPU/inv <= 2x floor", floorCPUSize, 0, show.Latency)
}

// throughput checks that throughput holds from N=64 to N=1600: the
// runtime against itself, allowed what the floor loses. On a machine of
// few CPUs the fake API and the callers share the CPU, and their cost per
// invocation grows with N (drv CPU): that fall-off is the harness's, not
// the runtime's, and no runtime can do better than the floor there.
func (j *floorJudge) throughput() {
	hi, lo := j.find("tiny", 1600), j.find("tiny", 64)
	if hi == nil || lo == nil {
		return
	}
	v, okV := hi.Medians[j.rt][bench.Throughput]
	b, okB := lo.Medians[j.rt][bench.Throughput]
	if !okV {
		v = math.NaN()
	}
	if !okB {
		b = math.NaN()
	}
	keep, what := tputKeep, "inv/s >= 0.9x inv/s at N=64"
	fhi, okFH := hi.Medians[target.Floor][bench.Throughput]
	flo, okFL := lo.Medians[target.Floor][bench.Throughput]
	if okFH && okFL && flo > 0 {
		kept := fhi / flo
		what += fmt.Sprintf(" x what the floor keeps (%.2fx)", kept)
		keep *= min(1, kept)
	}
	j.out = append(j.out, FloorCheck{Runtime: j.rt, Scenario: scenarioLabel(hi.Scenario), What: what,
		Value: v, Base: b, Limit: b * keep, Met: okV && okB && v >= b*keep, format: show.Count, base: "N=64"})
}
