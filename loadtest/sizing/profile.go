package sizing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// Bounds of a size profile.
const (
	MaxProfile  = 3 * time.Minute // the whole profile
	checkFor    = 5 * time.Second // the check at the recommended N
	stepStartup = 3 * time.Second // start, warm-up and stop of a step, at most as budgeted
	// memoryShare is the part of the machine's free memory a step may
	// be predicted to take.
	memoryShare = 0.5
)

// Options is a profile's function and how it is driven.
type Options struct {
	// Target is where the function runs and its environment; its Output,
	// when set, keeps the function's output.
	Target target.Options
	Binary string      // the function's bootstrap
	Items  []load.Item // its events
	VCPUs  int         // of the environment sized for
	// ScaleAt is the CPU share the capacity provider scales at (0.6).
	ScaleAt float64
	Step    time.Duration // the load at each N
	MaxTime time.Duration // the whole profile, maxProfile at most
	MaxN    int           // the largest N to measure, maxN at most
	Check   bool          // run the function at the recommended N
	Log     io.Writer     // a line per step
	// Bootstrap and Events say what was sized, for the report.
	Bootstrap, Events string
}

// Run measures the function as N grows, recommends N and memory, and
// checks the recommendation. The profile holds what was measured even
// when it returns an error; it has no Steps when none was measured.
func Run(ctx context.Context, o Options) (*Profile, error) {
	o.MaxTime, o.MaxN = min(o.MaxTime, MaxProfile), min(o.MaxN, MaxN)
	// The function's memory limit (GOMEMLIMIT for lmigo) must not bind
	// while it is measured: the machine's memory, unless -env says.
	if total, err := measure.MemTotalMB(); err == nil {
		o.Target.MemoryMB = max(o.Target.MemoryMB, total)
	}
	p := &Profile{VCPUs: o.VCPUs, MachineCPUs: runtime.NumCPU(), Target: o.Target.Target, Bootstrap: o.Bootstrap, Events: o.Events,
		ScaleAt: o.ScaleAt, LossTarget: lossTarget}
	rt := target.Runtime{Name: target.Function, Binary: o.Binary, SurvivesPanic: true}
	err := profileFunction(ctx, o, rt, p)
	if err != nil && p.rec.N == 0 {
		p.NoRecommendation = err.Error()
	}
	return p, err
}

// profileFunction sweeps N, recommends, and checks the recommendation; p
// holds what was measured even when it returns an error.
func profileFunction(ctx context.Context, o Options, rt target.Runtime, p *Profile) error {
	t0 := time.Now()
	deadline := t0.Add(o.MaxTime)
	defer func() { p.Elapsed = show.Duration(time.Since(t0).Round(time.Second)) }()
	last, err := p.sweep(ctx, o, rt, t0, deadline)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return p.summarize(p.checker(ctx, o, rt, deadline, last))
}

// sweep measures the function at one N after another (nextN), until it
// has found the knee, or the budget or the machine's memory ends it. It
// returns how long the last step took, start and stop included.
func (p *Profile) sweep(ctx context.Context, o Options, rt target.Runtime, t0, deadline time.Time) (time.Duration, error) {
	last := o.Step + stepStartup
	memNote := "" // set when memory lowers the largest N to measure
	for len(p.Steps) < 30 {
		limit, note := memoryLimit(p.Steps, o.MaxN)
		if note != "" {
			memNote = note
		}
		n := nextN(p.Steps, limit)
		if n == 0 {
			if limit < o.MaxN && knee(p.Steps) >= limit {
				p.KneeBound = memNote
			}
			break
		}
		// The step's time, predicted before it runs: a step at twice
		// the N may take twice as long to warm up and stop. The check
		// after the sweep takes about a step's start and stop and more.
		need := max(o.Step+stepStartup, 2*last)
		if o.Check {
			need += 2 * (checkFor + last) // a check, and one more
		}
		if time.Until(deadline) < need {
			p.KneeBound = fmt.Sprintf("the %s budget ran out", o.MaxTime)
			break
		}
		ts := time.Now()
		s, err := measureStep(ctx, o.Target, rt, o.Items, n, o.Step)
		if err != nil {
			return last, fmt.Errorf("at N=%d: %w", n, err)
		}
		last = time.Since(ts)
		if s, err = p.again(ctx, o, rt, s, time.Until(deadline) > need); err != nil {
			return last, err
		}
		p.Steps = append(p.Steps, s)
		fmt.Fprintf(o.Log, "size: N=%-4d %8.0f/s  p50 %-8s p99 %-8s CPU/inv %-8s peak RSS %-9s others %.2f CPUs  %s  (%s of at most %s)\n",
			s.N, s.Throughput, show.Millis(s.P50MS), show.Millis(s.P99MS), show.Millis(s.CPUMS), show.MiB(s.PeakRSSMiB), s.OtherCPUs,
			map[bool]string{true: "linear", false: "past the knee"}[s.Linear], time.Since(t0).Round(time.Second), o.MaxTime)
	}
	p.boundKnee(o.MaxN)
	return last, nil
}

// memoryLimit is the largest N, at most top, whose memory, predicted from
// the steps so far, fits in half of what the machine has free; and when
// memory lowered it, what to say.
func memoryLimit(steps []Step, top int) (int, string) {
	if free, err := measure.MemAvailableMiB(); err == nil && len(steps) > 0 {
		if fit := fitMemory(steps); fit.PerInvMiB > 0 {
			if m := int((memoryShare*free - fit.BaseMiB) / fit.PerInvMiB); m < top {
				limit := max(m, 1)
				return limit, fmt.Sprintf("N=%d would take more than half of the machine's %.0f MiB free", limit+1, free)
			}
		}
	}
	return top, ""
}

// again says whether s is linear and, when it is past the knee while
// other work took the machine's CPUs and the budget allows (room), has
// it measured once more: the knee is the function's, not the machine's
// noise. It returns the better of the two.
func (p *Profile) again(ctx context.Context, o Options, rt target.Runtime, s Step, room bool) (Step, error) {
	s.Linear = s.Throughput > 0 && (s.N == 1 || linear(s, p.Steps[0]))
	if s.Linear || s.N == 1 || s.OtherCPUs <= noisyCPUs || !room {
		return s, nil
	}
	again, err := measureStep(ctx, o.Target, rt, o.Items, s.N, o.Step)
	if err != nil {
		return s, fmt.Errorf("at N=%d: %w", s.N, err)
	}
	again.Linear, again.Remeasured = linear(again, p.Steps[0]), true
	if again.Throughput > s.Throughput {
		s = again
	}
	s.Remeasured = true
	return s, nil
}

// boundKnee says, once the sweep has ended, whether the knee it found is
// only a bound: with a step past the knee seen, a budget that ended the
// refinement made the knee coarser, not a bound; a sweep that reached
// top saw no knee.
func (p *Profile) boundKnee(top int) {
	switch {
	case slices.ContainsFunc(p.Steps, func(s Step) bool { return !s.Linear }):
		if p.KneeBound != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("The refinement of the knee stopped early (%s): the knee lies between N=%d and the next N measured.", p.KneeBound, knee(p.Steps)))
		}
		p.KneeBound = ""
	case len(p.Steps) > 0 && p.KneeBound == "" && knee(p.Steps) >= top:
		p.KneeBound = fmt.Sprintf("-max-n %d", top)
	}
}

// checker runs the function at the N it is given, arrivals at random at
// rate: only when -check, and the vCPUs sized for are this machine's,
// and its memory fits here, and the budget leaves the time; otherwise it
// notes why not and runs nothing.
func (p *Profile) checker(ctx context.Context, o Options, rt target.Runtime, deadline time.Time, last time.Duration) func(n int, rate float64) (*Check, error) {
	window := min(checkFor, 2*o.Step)
	return func(n int, rate float64) (*Check, error) {
		if !o.Check || p.VCPUs != p.MachineCPUs {
			return nil, nil
		}
		if free, err := measure.MemAvailableMiB(); err != nil || p.fit().at(n) > memoryShare*free {
			p.Notes = append(p.Notes, fmt.Sprintf("Not checked: N=%d would take %.0f MiB, more than half of what this machine has free.", n, p.fit().at(n)))
			return nil, nil
		}
		if time.Until(deadline) < window+last {
			p.Notes = append(p.Notes, fmt.Sprintf("Not checked at N=%d: the %s budget (-max-time) ran out.", n, o.MaxTime))
			return nil, nil
		}
		fmt.Fprintf(o.Log, "size: checking N=%d, arrivals at random at %.0f/s, for %s\n", n, rate, window)
		return checkStep(ctx, o.Target, rt, o.Items, n, rate, window)
	}
}

// summarize derives the per-invocation figures, the knee and the
// recommendation from p.Steps, then runs check at the recommended N.
func (p *Profile) summarize(check func(n int, rate float64) (*Check, error)) error {
	if len(p.Steps) == 0 || !p.Steps[0].Linear {
		return errors.New("the function did not answer at N=1")
	}
	if p.ScaleAt <= 0 {
		p.ScaleAt, p.LossTarget = DefaultScaleAt, lossTarget
	}
	if err := p.perInvocation(); err != nil {
		return err
	}
	p.knees()
	p.doubts()
	// The knee for the vCPUs sized for: the function alone's on this
	// machine's CPUs, per CPU.
	fit := p.fit()
	r, err := recommend(p.FunctionKnee*float64(p.VCPUs)/float64(p.MachineCPUs), p.VCPUs, p.ScaleAt, fit)
	if err != nil {
		return err
	}
	p.rec = r
	p.MemoryBoundN = map[string]int{}
	for _, ratio := range memoryRatios {
		p.MemoryBoundN[strconv.Itoa(ratio)] = memoryBound(fit, ratio, p.VCPUs)
	}
	err = p.confirm(check)
	p.settle()
	return err
}

// perInvocation derives what one invocation takes from the steps: wall
// time, CPU (the function's and the load test's), its share waiting, and
// memory, as a base and a part per invocation in flight.
func (p *Profile) perInvocation() error {
	one := p.Steps[0]
	// The mean, not the median: Little's law holds for the mean, and a
	// batch consumer's few large batches are most of its time.
	p.WallMS = one.MeanMS
	p.EventCosts = one.costs
	p.KneeN = knee(p.Steps)
	// CPU per invocation over every linear step: more invocations, finer
	// than the clock's 10 ms ticks.
	var cpu, drv float64
	var inv int64
	for _, s := range p.Steps {
		if s.Linear {
			cpu += s.CPUMS * float64(s.Invocations)
			drv += s.DriverCPUMS * float64(s.Invocations)
			inv += s.Invocations
		}
	}
	p.CPUMS, p.DriverCPUMS = cpu/float64(max(inv, 1)), drv/float64(max(inv, 1))
	if p.CPUMS <= 0 {
		return fmt.Errorf("no recommendation: the function's processes used no CPU time the kernel counted in %d invocations, so nothing bounds N by its CPUs", inv)
	}
	p.WaitShare = max(0, 1-p.CPUMS/p.WallMS)
	fit := fitMemory(p.Steps)
	p.BaseMiB, p.MemPerInvMiB = fit.BaseMiB, fit.PerInvMiB
	return nil
}

// knees sets the knee by Little's law, on the machine's CPUs and on those
// other work left, and the knee of the function alone.
func (p *Profile) knees() {
	// The CPUs the function and the load test had: the machine's, less
	// what other work took, on average over the steps that place the
	// knee (it and those above it).
	var others float64
	var near int
	for _, s := range p.Steps {
		if s.N >= p.KneeN {
			others += s.OtherCPUs
			near++
		}
	}
	others /= float64(max(near, 1))
	p.OtherCPUs = others
	// Half the machine at least: a correction larger than 2x would rest
	// on a figure as noisy as the other work that made it.
	p.HadCPUs = max(float64(p.MachineCPUs)-others, float64(p.MachineCPUs)/2)
	p.LittleKnee = littleKnee(float64(p.MachineCPUs), p.WallMS, p.CPUMS)
	p.LittleHere = littleKnee(p.HadCPUs, p.WallMS, p.CPUMS+p.DriverCPUMS)
	p.KneeAgrees = kneeAgrees(p.KneeN, p.LittleHere)
	p.FunctionKnee = functionKnee(p.KneeN, p.LittleHere, p.LittleKnee, p.KneeBound == "")
}

// functionKnee is the knee of the function alone, from the knee measured
// with the load test's CPU and other work beside it. The CPUs' busy share
// at the knee is knee / littleHere (Little's law); in that share the knee
// was the CPUs', and grows by littleKnee / littleHere without the others.
// One formula, continuous in its inputs: a threshold between two models
// flipped N=4 to N=12 on the same binary. Never past littleKnee: beyond
// it nothing is gained but queueing; never below the knee measured.
func functionKnee(knee int, littleHere, littleKnee float64, seen bool) float64 {
	k := float64(knee)
	if !seen || littleHere <= 0 || littleKnee <= littleHere {
		return k
	}
	busy := min(1, k/littleHere)
	return max(k, min(k*(1+busy*(littleKnee/littleHere-1)), littleKnee))
}

// doubts notes what makes the figures doubtful: a knee Little's law does
// not bear out, other work on the machine, a sweep that saw no knee.
func (p *Profile) doubts() {
	if !p.KneeAgrees && p.KneeBound == "" {
		p.Notes = append(p.Notes, fmt.Sprintf("The measured knee (N=%d) disagrees with Little's law (N≈%.0f on the %.1f CPUs left by other work, with the load test's CPU beside the function; %.0f for the function alone): %s", p.KneeN, p.LittleHere, p.HadCPUs, p.LittleKnee, disagreement(p)))
	}
	var busy []string
	for _, s := range p.Steps {
		if s.OtherCPUs > noisyCPUs {
			busy = append(busy, fmt.Sprintf("N=%d (%.2f CPUs)", s.N, s.OtherCPUs))
		}
	}
	if len(busy) > 0 {
		p.Notes = append(p.Notes, "Other work took the machine's CPUs during "+strings.Join(busy, ", ")+": those figures are doubtful; size again on a quiet machine.")
	}
	if p.KneeBound != "" {
		p.Notes = append(p.Notes, fmt.Sprintf("The sweep stopped before it saw the knee (%s): N=%d is a lower bound; Little's law puts the knee near N=%.0f.", p.KneeBound, p.KneeN, p.LittleKnee))
	}
}

// settle sets the settings, the model's figures and the sentences from
// p.rec, once its N is final.
func (p *Profile) settle() {
	r := p.rec
	p.PerExecutionEnvironmentMaxConcurrency, p.ConcurrencyPerVCpu, p.ExecutionEnvironmentMemoryGiBPerVCpu = r.N, r.PerVCPU, r.Ratio
	p.MemorySizeMB, p.LimitedBy, p.SAM = r.MemorySizeMB, r.LimitedBy, samParams(r)
	p.CPUN, p.Offered, p.LossN, p.LatencyN, p.MemoryN, p.Loss = r.CPUN, r.Offered, r.LossN, r.LatencyN, r.MemoryN, r.Loss
	if n := len(p.Checks); n > 0 {
		p.Check = &p.Checks[n-1]
	}
	p.Sentences = [2]string{cpuSentence(p), memorySentence(p)}
	p.RestsOn = restsOn(p)
}

// disagreement says why a measured knee may part from Little's law.
func disagreement(p *Profile) string {
	if float64(p.KneeN) < p.LittleHere {
		return "the function stops scaling before its CPUs are busy: it waits on something shared (a lock, a pool, a downstream limit), or other work on this machine took the CPUs (see its share per step). The recommendation follows the measurement, scaled only in the share the CPUs were busy."
	}
	return "the function scales beyond its CPUs: its CPU time per invocation falls with N (shared work, caches), or its waiting is not on this machine."
}
