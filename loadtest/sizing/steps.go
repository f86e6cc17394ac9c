package sizing

import (
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// The figures of size, from the steps of a sweep to the recommendation
// and its checks: the types every file of size reads, and the
// arithmetic of the sweep (the knee, the next N, the memory fit).

// Profile is what size measured and recommends; its JSON is -json.
// The three names of the platform are at the top level.
type Profile struct {
	PerExecutionEnvironmentMaxConcurrency int     `json:"PerExecutionEnvironmentMaxConcurrency"`
	ConcurrencyPerVCpu                    float64 `json:"ConcurrencyPerVCpu"`
	ExecutionEnvironmentMemoryGiBPerVCpu  int     `json:"ExecutionEnvironmentMemoryGiBPerVCpu"`

	MemorySizeMB int    `json:"memorySizeMB"`
	LimitedBy    string `json:"limitedBy"` // cpu, loss, latency or memory
	// Confirmed: the N recommended held its check here. Unconfirmed says
	// plainly what to use when checks ran and none held.
	Confirmed   bool   `json:"confirmed"`
	Unconfirmed string `json:"unconfirmed,omitempty"`
	SAM         string `json:"samParameters"`
	VCPUs       int    `json:"vcpus"`       // the environment sized for
	MachineCPUs int    `json:"machineCpus"` // the CPUs measured on
	Target      string `json:"target"`
	Bootstrap   string `json:"bootstrap"`
	Events      string `json:"events"`

	WallMS       float64 `json:"wallMsPerInvocation"` // at N=1, the mean
	CPUMS        float64 `json:"cpuMsPerInvocation"`
	WaitShare    float64 `json:"waitingShare"` // of the wall time, not on a CPU
	BaseMiB      float64 `json:"baseRssMiB"`
	MemPerInvMiB float64 `json:"memoryPerInvocationMiB"`
	KneeN        int     `json:"kneeN"`
	KneeBound    string  `json:"kneeBound,omitempty"`      // why the sweep stopped before it saw the knee
	DriverCPUMS  float64 `json:"driverCpuMsPerInvocation"` // the load test's, beside the function
	LittleKnee   float64 `json:"littleKneeN"`              // the function alone: CPUs x wall / CPU
	OtherCPUs    float64 `json:"otherCpus"`                // what other work took of the machine's, on average
	HadCPUs      float64 `json:"hadCpus"`                  // what was left to the function and the load test
	LittleHere   float64 `json:"littleKneeHereN"`          // on HadCPUs, with the load test's CPU beside the function
	KneeAgrees   bool    `json:"kneeAgreesWithLittle"`     // the measured knee and LittleHere
	FunctionKnee float64 `json:"functionKneeN"`            // the knee with the load test's share removed

	// The model (model.go), for the vCPUs sized for.
	ScaleAt    float64 `json:"scaleAtCpu"`     // the CPU share the capacity provider scales at
	LossTarget float64 `json:"lossTarget"`     // the share N may turn away there
	CPUN       int     `json:"cpuN"`           // the N the CPUs allow
	Offered    float64 `json:"offeredErlangs"` // in flight on average at that load
	LossN      int     `json:"lossN"`          // the fewest slots within the loss target
	LatencyN   int     `json:"latencyN"`       // the latency bound
	MemoryN    int     `json:"memoryN"`        // the most the largest memory ratio holds
	Loss       float64 `json:"lossAtN"`        // the share turned away at the N recommended

	// MemoryBoundN is, per memory ratio, the largest N its environment
	// holds with memoryRoom to spare.
	MemoryBoundN map[string]int `json:"memoryBoundN"`
	// EventCosts are the wall times at N=1 per events file, where the
	// events come from several.
	EventCosts []EventCost `json:"eventCosts,omitempty"`

	// NoRecommendation says why there is none; the figures stand.
	NoRecommendation string `json:"noRecommendation,omitempty"`
	// RestsOn says what the figures rest on (model.go).
	RestsOn string `json:"restsOn,omitempty"`

	Sentences [2]string     `json:"explanation"`
	Notes     []string      `json:"notes,omitempty"`
	Steps     []Step        `json:"steps"`
	Check     *Check        `json:"check,omitempty"` // the last of Checks
	Checks    []Check       `json:"checks,omitempty"`
	Elapsed   show.Duration `json:"elapsed"`
	// Output sums up the function's output over every step.
	Output *target.OutputCounts `json:"output,omitempty"`

	rec recommendation
}

func (p *Profile) fit() memFit { return memFit{BaseMiB: p.BaseMiB, PerInvMiB: p.MemPerInvMiB} }

// Check is the function run at one N, and what the model predicted.
type Check struct {
	N         int     `json:"n"`
	Rate      float64 `json:"rate"`
	Arrivals  string  `json:"arrivals"`
	Seconds   float64 `json:"seconds"`
	Answered  int64   `json:"answered"`
	Throttles int64   `json:"throttles"`
	Wrong     int64   `json:"wrong"` // wrong answers and invocations without one
	P99MS     float64 `json:"p99Ms"`
	MeanMS    float64 `json:"meanMs"`    // the wall time seen, CPUs shared
	OtherCPUs float64 `json:"otherCpus"` // what other work took of the machine meanwhile

	Offered          float64 `json:"offeredErlangs"`   // rate × mean wall time alone
	PredictedLoss    float64 `json:"predictedLoss"`    // Erlang B at N and that load
	LossAtSeen       float64 `json:"lossAtSeenWall"`   // Erlang B at the wall time seen
	AllowedThrottles int64   `json:"allowedThrottles"` // the loss allowed, with chance
	PredictedP99MS   float64 `json:"predictedP99Ms"`   // 0: not predicted
	Holds            bool    `json:"holds"`
	Why              string  `json:"why,omitempty"` // why it does not hold
	lossHigh         bool
}

// recommendation is what size recommends, and why.
type recommendation struct {
	N            int     // PerExecutionEnvironmentMaxConcurrency
	PerVCPU      float64 // ConcurrencyPerVCpu
	Ratio        int     // ExecutionEnvironmentMemoryGiBPerVCpu
	MemorySizeMB int     // the function's MemorySize: Ratio GiB x vCPUs
	LimitedBy    string  // cpu, loss, latency or memory
	NeedMiB      float64 // the memory the fit predicts at N

	Knee     float64 // the N at which the function alone keeps the vCPUs busy
	CPUN     int     // Knee, rounded: the N the CPUs allow
	Offered  float64 // Erlangs offered at the load the capacity provider scales at
	LossN    int     // the fewest slots that turn away at most lossTarget of them
	LatencyN int     // latencyStretch x Knee
	MemoryN  int     // the most the largest memory ratio holds
	Loss     float64 // the share turned away at N, at the load offered
}

// EventCost is what the events of one file cost at N=1, one at a time.
type EventCost struct {
	File        string  `json:"file"`
	Invocations int64   `json:"invocations"`
	MeanMS      float64 `json:"meanMs"`
	P50MS       float64 `json:"p50Ms"`
	P99MS       float64 `json:"p99Ms"`
	MaxMS       float64 `json:"maxMs"`
}

// Step is the function measured at one N: N closed-loop callers for
// a window, against a runtime started with AWS_LAMBDA_MAX_CONCURRENCY=N.
type Step struct {
	N           int     `json:"n"`
	Invocations int64   `json:"invocations"`
	Throughput  float64 `json:"throughput"` // answered per second
	MeanMS      float64 `json:"meanMs"`     // wall time per invocation
	P50MS       float64 `json:"p50Ms"`
	P90MS       float64 `json:"p90Ms"`
	P99MS       float64 `json:"p99Ms"`
	MaxMS       float64 `json:"maxMs"`
	CPUMS       float64 `json:"cpuMs"`      // the process's CPU per invocation
	BaseRSSMiB  float64 `json:"baseRssMiB"` // after init, before the first invocation
	PeakRSSMiB  float64 `json:"peakRssMiB"` // VmHWM at the end of the load
	Throttles   int64   `json:"throttles"`
	// DriverCPUMS is the load test's CPU per invocation (the emulator's
	// included); OtherCPUs the CPUs the rest of the machine used, on
	// average over the window: above noisyCPUs the step is doubtful.
	DriverCPUMS float64 `json:"driverCpuMs"`
	OtherCPUs   float64 `json:"otherCpus"`
	Remeasured  bool    `json:"remeasured,omitempty"`
	// Linear: the step still gains what N promises over N=1 (throughput
	// and latency within linearLoss of it).
	Linear bool `json:"linear"`

	costs []EventCost // per events file, where there are several
}

// linearLoss is how far a step may fall short of N times N=1's throughput
// and how far its p50 may rise over N=1's, and still count as linear.
const (
	linearThroughput = 0.8
	linearLatency    = 1.3
)

// noisyCPUs is the CPU the rest of the machine may use during a step
// without making it doubtful.
const noisyCPUs = 0.25

// linear says whether s keeps what N promises against one, the step at N=1.
func linear(s, one Step) bool {
	if one.Throughput <= 0 || one.P50MS <= 0 {
		return false
	}
	return s.Throughput >= linearThroughput*float64(s.N)/float64(one.N)*one.Throughput &&
		s.P50MS <= linearLatency*one.P50MS
}

// knee is the largest N of the linear steps of a sweep (0 when none is):
// beyond it throughput stops growing with N or latency starts to.
func knee(steps []Step) int {
	k := 0
	for _, s := range steps {
		if s.Linear && s.N > k {
			k = s.N
		}
	}
	return k
}

// nextN is the next N to measure after steps (sorted by when they ran):
// doubling while linear, then halving the interval between the last
// linear N and the first that was not, until it is an eighth of the
// knee; 0 when done.
func nextN(steps []Step, maxN int) int {
	lo, hi := 0, 0
	for _, s := range steps {
		if s.Linear {
			lo = max(lo, s.N)
		} else if hi == 0 || s.N < hi {
			hi = s.N
		}
	}
	if lo == 0 {
		if len(steps) == 0 {
			return 1
		}
		return 0 // not even N=1 measured well
	}
	if hi == 0 || hi <= lo {
		if lo >= maxN {
			return 0
		}
		return min(2*lo, maxN)
	}
	if hi-lo <= max(1, lo/8) {
		return 0
	}
	return lo + (hi-lo)/2
}

// memFit is the memory of the process as a line: base + perInv × N.
type memFit struct {
	BaseMiB, PerInvMiB float64
}

// at is the memory the fit predicts at N.
func (f memFit) at(n int) float64 { return f.BaseMiB + f.PerInvMiB*float64(n) }

// fitMemory fits peak RSS over N by least squares; with one step, base is
// its RSS after init and the rest of its peak is the invocation's.
func fitMemory(steps []Step) memFit {
	switch len(steps) {
	case 0:
		return memFit{}
	case 1:
		s := steps[0]
		return memFit{BaseMiB: s.BaseRSSMiB, PerInvMiB: max(s.PeakRSSMiB-s.BaseRSSMiB, 0) / float64(s.N)}
	}
	var sx, sy, sxx, sxy float64
	for _, s := range steps {
		x, y := float64(s.N), s.PeakRSSMiB
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(steps))
	den := n*sxx - sx*sx
	if den == 0 {
		return fitMemory(steps[:1])
	}
	slope := (n*sxy - sx*sy) / den
	slope = max(slope, 0)
	base := (sy - slope*sx) / n
	// The intercept of a noisy fit can fall below the process as it
	// starts; the smallest base measured is the floor.
	minBase := steps[0].BaseRSSMiB
	for _, s := range steps {
		minBase = min(minBase, s.BaseRSSMiB)
	}
	return memFit{BaseMiB: max(base, minBase), PerInvMiB: slope}
}

// memoryRatios are the values of ExecutionEnvironmentMemoryGiBPerVCpu.
var memoryRatios = []int{2, 4, 8}

// memoryRoom is the share of an environment's memory kept free at the
// recommended N: lmigo's admission holds invocations back from a live
// heap of 85% of its memory limit, itself 90% of the memory (76.5%).
const memoryRoom = 0.25

// Largest and smallest N an environment takes.
const (
	minN = 1
	MaxN = 1600
)

// memoryBound is the largest N an environment of ratio GiB per vCPU and
// vcpus vCPUs holds with memoryRoom to spare (maxN when memory does not
// grow with N).
func memoryBound(mem memFit, ratio, vcpus int) int {
	room := (1-memoryRoom)*float64(ratio*vcpus*1024) - mem.BaseMiB
	if mem.PerInvMiB <= 0 {
		return MaxN
	}
	return min(max(int(room/mem.PerInvMiB), 0), MaxN)
}

// littleKnee is the N at which cpus CPUs are busy when each invocation
// takes wallMS of which cpuMS is CPU (Little's law: in flight = rate x
// time, the rate being cpus / cpu time); 0 when no CPU time was
// measured, never +Inf: the figure goes into JSON.
func littleKnee(cpus, wallMS, cpuMS float64) float64 {
	if cpuMS <= 0 {
		return 0
	}
	return cpus * wallMS / cpuMS
}

// kneeAgrees says whether a measured knee is within the sweep's
// coarseness of Little's law's: a factor of 1.5 below it, and one
// doubling of N above it. It chooses a note, never the model.
func kneeAgrees(measured int, little float64) bool {
	if little <= 0 {
		return false
	}
	r := float64(measured) / little
	return r >= 1/1.5 && r <= 2
}
