package sizing

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lmigo/lmigo/loadtest/show"
)

// The recommendation, from the figures measured. An execution
// environment is a loss system (erlang.go): invocations arrive at random,
// and one that finds every slot busy is throttled. The capacity provider
// adds environments when their CPU reaches its target
// (AverageCPUUtilization, 60 in deploy/template.yaml), so an environment
// is offered up to that share of what its CPUs serve. N is the larger of
// the N its CPUs keep busy and the N that turns away at most lossTarget
// of the arrivals at that load, bounded by latency and by memory.

// Targets of the recommendation.
const (
	// DefaultScaleAt is the CPU share the capacity provider scales at:
	// deploy/template.yaml's AverageCPUUtilization.
	DefaultScaleAt = 0.6
	// lossTarget is the share of arrivals N may turn away at that load.
	lossTarget = 0.01
	// latencyStretch bounds N by latency: with every slot busy, the CPUs
	// shared stretch an invocation to at most this times its time alone.
	latencyStretch = 2
)

// recommend sizes an environment of vcpus vCPUs for a function whose
// knee there is knee (the N at which it keeps them busy), whose capacity
// provider scales at the CPU share scaleAt, with the memory fit mem.
func recommend(knee float64, vcpus int, scaleAt float64, mem memFit) (recommendation, error) {
	if knee <= 0 || vcpus < 1 {
		return recommendation{}, fmt.Errorf("no knee measured (N=%.1f for %d vCPUs)", knee, vcpus)
	}
	r := recommendation{Knee: knee, CPUN: max(int(math.Round(knee)), minN), Offered: scaleAt * knee}
	r.LossN = erlangN(r.Offered, lossTarget, MaxN)
	r.LatencyN = max(int(latencyStretch*knee), r.CPUN)
	r.MemoryN = memoryBound(mem, memoryRatios[len(memoryRatios)-1], vcpus)
	if r.MemoryN < minN {
		return recommendation{}, fmt.Errorf("one invocation needs %.0f MiB beside a base of %.0f MiB: not even %d GiB per vCPU holds one on %d vCPUs with %.0f%% to spare",
			mem.PerInvMiB, mem.BaseMiB, memoryRatios[len(memoryRatios)-1], vcpus, 100*memoryRoom)
	}
	n, by := r.CPUN, "cpu"
	if r.LossN > n {
		n, by = r.LossN, "loss"
	}
	n = min(n, MaxN) // the platform's most
	if n > r.LatencyN {
		n, by = r.LatencyN, "latency"
	}
	if n > r.MemoryN {
		n, by = r.MemoryN, "memory"
	}
	r.LimitedBy = by
	return r.at(n, vcpus, mem), nil
}

// at is r with N set to n: the memory ratio, the size and the loss
// follow it.
func (r recommendation) at(n, vcpus int, mem memFit) recommendation {
	r.N = n
	r.Ratio = memoryRatios[len(memoryRatios)-1]
	for _, ratio := range memoryRatios {
		if mem.at(n) <= (1-memoryRoom)*float64(ratio*vcpus*1024) {
			r.Ratio = ratio
			break
		}
	}
	r.PerVCPU = math.Round(10*float64(n)/float64(vcpus)) / 10
	r.MemorySizeMB = r.Ratio * vcpus * 1024
	r.NeedMiB = mem.at(n)
	r.Loss = erlangB(n, r.Offered)
	return r
}

// cpuSentence explains N: the CPUs' knee, the loss at the load the
// capacity provider scales at, and what bounds it.
func cpuSentence(p *Profile) string {
	r := p.rec
	s := fmt.Sprintf("Each invocation took %s of wall time on average, %s of it CPU (%.0f%% waiting), so %d CPUs keep about %.0f in flight (Little's law: %d × %s / %s); measured, throughput stopped growing, or latency started to grow, above N=%d",
		show.Millis(p.WallMS), show.Millis(p.CPUMS), 100*p.WaitShare, p.MachineCPUs, p.LittleKnee, p.MachineCPUs, show.Millis(p.WallMS), show.Millis(p.CPUMS), p.KneeN)
	if p.KneeBound != "" {
		s += " (the highest N measured: " + p.KneeBound + ")"
	}
	if p.FunctionKnee > float64(p.KneeN) {
		beside := fmt.Sprintf("the load test's %s of CPU per invocation beside the function", show.Millis(p.DriverCPUMS))
		if p.OtherCPUs > noisyCPUs {
			beside += fmt.Sprintf(" and other work taking %.1f of the %d CPUs", p.OtherCPUs, p.MachineCPUs)
		}
		s += fmt.Sprintf(" with %s, where Little's law expects N≈%s: the CPUs were %.0f%% busy at the knee, so the function alone keeps N=%s busy (N=%d scaled by what the others took%s)",
			beside, fmtTenth(p.LittleHere), 100*min(1, float64(p.KneeN)/p.LittleHere), fmtTenth(p.FunctionKnee), p.KneeN, capped(p))
	}
	s += fmt.Sprintf(": %d vCPUs keep about %s busy, so the CPUs allow N=%d", p.VCPUs, fmtTenth(r.Knee), r.CPUN)
	s += fmt.Sprintf(". At the load the capacity provider scales at (%.0f%% CPU), %s invocations are in flight on average (%.0f%% of %s), arriving at random: Erlang's loss formula turns away ",
		100*p.ScaleAt, fmtTenth(r.Offered), 100*p.ScaleAt, fmtTenth(r.Knee))
	if r.LossN <= r.CPUN {
		s += fmt.Sprintf("at most %.0f%% of them from N=%d, fewer slots than the CPUs allow", 100*lossTarget, r.LossN)
	} else {
		s += fmt.Sprintf("%s of them at N=%d and at most %.0f%% from N=%d", fmtShare(erlangB(r.CPUN, r.Offered)), r.CPUN, 100*lossTarget, r.LossN)
	}
	// The model's N is the first check's; a failed check may raise it.
	n := r.N
	if len(p.Checks) > 0 {
		n = p.Checks[0].N
	}
	switch r.LimitedBy {
	case "cpu":
		s += fmt.Sprintf(", so the CPUs' N=%d", n)
	case "loss":
		s += fmt.Sprintf(", so N=%d", n)
	case "latency":
		s += fmt.Sprintf("; but with all N busy at once the CPUs shared stretch an invocation to at most %d× its time alone only up to N=%d (%d × %s), so N=%d turns away %s",
			latencyStretch, r.LatencyN, latencyStretch, fmtTenth(r.Knee), n, fmtShare(erlangB(n, r.Offered)))
	case "memory":
		s += fmt.Sprintf("; memory holds only N=%d (below), which turns away %s", n, fmtShare(erlangB(n, r.Offered)))
	}
	if n != r.N {
		s += fmt.Sprintf(", which the checks below raised to N=%d", r.N)
	}
	return s + "."
}

// capped says when Little's law for the function alone bounds its knee.
func capped(p *Profile) string {
	if p.FunctionKnee >= p.LittleKnee-1e-9 {
		return fmt.Sprintf(", at most Little's law's %s for the function alone", fmtTenth(p.LittleKnee))
	}
	return ""
}

// memorySentence explains the memory ratio.
func memorySentence(p *Profile) string {
	r := p.rec
	env := func(ratio int) string {
		return fmt.Sprintf("%d GiB per vCPU (%d GiB for %d vCPUs)", ratio, ratio*p.VCPUs, p.VCPUs)
	}
	if r.LimitedBy == "memory" {
		want := max(r.CPUN, min(r.LossN, r.LatencyN))
		return fmt.Sprintf("The process took %.0f MiB plus %.1f MiB per invocation in flight, so N=%d would need %.0f MiB; even %s holds only N=%d with %.0f%% to spare (%.0f MiB), so memory sets N=%d, %.1f per vCPU.",
			p.BaseMiB, p.MemPerInvMiB, want, p.fit().at(want), env(r.Ratio), r.N, 100*memoryRoom, r.NeedMiB, r.N, r.PerVCPU)
	}
	return fmt.Sprintf("The process took %.0f MiB plus %.1f MiB per invocation in flight, so N=%d needs %.0f MiB, which %s holds with %.0f%% to spare%s.",
		p.BaseMiB, p.MemPerInvMiB, r.N, r.NeedMiB, env(r.Ratio), 100*memoryRoom, smallerRatio(r))
}

// Per-vCPU figures the report relates its own to.
const (
	docsPerVCPU = 32 // docs/tuning.md's start for handlers that wait on I/O
	awsPerVCPU  = 64 // AWS's most for invocations that use little CPU
)

// restsOn says what the figures rest on: the CPU and the waiting of the
// function as it ran here, its downstream calls stubbed or local. N per
// vCPU follows wall ÷ CPU, so a stub's few microseconds of CPU give far
// more than docs/tuning.md's 32 per vCPU without contradicting it.
func restsOn(p *Profile) string {
	little := p.WallMS / p.CPUMS // Little's law per vCPU
	s := fmt.Sprintf("These figures rest on the function as it ran here: each invocation took %s of CPU in %s, with its downstream calls as this machine answered them (stubbed, a local stand-in, or none): that is the stub's CPU and waiting, not production's. N per vCPU follows wall ÷ CPU (Little's law), %.0f per vCPU here, and the recommendation is %s per vCPU; docs/tuning.md's %d per vCPU is the start for a handler that spends about 1/%d of its wall time on CPU (%s of %s here), and AWS suggests up to %d per vCPU for invocations that use little CPU.",
		show.Millis(p.CPUMS), show.Millis(p.WallMS), little, fmtTenth(p.ConcurrencyPerVCpu), docsPerVCPU, docsPerVCPU, show.Millis(p.WallMS/docsPerVCPU), show.Millis(p.WallMS), awsPerVCPU)
	if p.ConcurrencyPerVCpu > awsPerVCPU {
		s += fmt.Sprintf(" Above %d per vCPU, size again with the real downstream, or a stand-in that waits and costs CPU as it does (TLS, signing, decoding), before you trust it.", awsPerVCPU)
	}
	return s
}

// fmtTenth writes v to a tenth, without a trailing ".0".
func fmtTenth(v float64) string { return strconv.FormatFloat(math.Round(10*v)/10, 'f', -1, 64) }

// fmtShare writes a share as a percentage, finer the smaller it is, so
// that it agrees with the counts beside it (108 of 7551 is 1.4%, not 1%).
func fmtShare(v float64) string {
	switch {
	case v < 0.01:
		return fmt.Sprintf("%.2f%%", 100*v)
	case v < 0.0995: // below 10% once rounded to a tenth
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

// smallerRatio says why a smaller ratio than the one chosen would not do.
func smallerRatio(r recommendation) string {
	if r.Ratio == memoryRatios[0] {
		return ""
	}
	less := memoryRatios[0]
	for _, ratio := range memoryRatios {
		if ratio < r.Ratio {
			less = ratio
		}
	}
	return fmt.Sprintf(" and %d GiB per vCPU does not", less)
}

// samParams are the parameters of deploy/template.yaml for r, to paste.
func samParams(r recommendation) string {
	return strings.Join([]string{
		fmt.Sprintf("MaxConcurrency=%d", r.N),
		fmt.Sprintf("MemoryGiBPerVCpu=%d", r.Ratio),
		fmt.Sprintf("MemorySize=%d", r.MemorySizeMB),
	}, " ")
}
