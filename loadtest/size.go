package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// Bounds of a size profile.
const (
	maxProfile  = 3 * time.Minute // the whole profile
	checkFor    = 5 * time.Second // the check at the recommended N
	stepStartup = 3 * time.Second // start, warm-up and stop of a step, at most as budgeted
	// memoryShare is the part of the machine's free memory a step may
	// be predicted to take.
	memoryShare = 0.5
)

// sizeMain is `loadtest size`: it measures the user's function as N grows
// and recommends N and memory.
func sizeMain(ctx context.Context, args []string) error {
	return sizeCommand(ctx, args, os.Stdout, os.Stderr)
}

// sizeCommand is sizeMain writing to stdout and stderr.
func sizeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := defaultConfig()
	cfg.stdout, cfg.stderr = stdout, stderr
	cfg.Target, cfg.Reps, cfg.Timeout = target.RIE, 1, 30*time.Second
	fs := flag.NewFlagSet("loadtest size", flag.ContinueOnError)
	fs.StringVar(&cfg.Bootstrap, "bootstrap", "", "your function: a bootstrap binary, or a zip as lmigo-pack writes it (required)")
	fs.StringVar(&cfg.Events, "events", "", "your JSON events (required): a file of one event, a JSON array of events or one event a line, or a directory of such .json files")
	vcpus := fs.Int("vcpus", runtime.NumCPU(), "vCPUs of the execution environment to size for")
	jsonOut := fs.String("json", "", "write the recommendation and the figures as JSON to this file")
	fs.StringVar(&cfg.Target, "target", cfg.Target, "rie (the AWS emulator in LMI mode; root) or fake (the fake Runtime API)")
	fs.BoolVar(&cfg.Shuffle, "shuffle", false, "send the events shuffled (the same order every run) instead of in the file's order")
	fs.StringVar(&cfg.Expect, "expect", "", "a right answer's body matches this regular expression (default: a right answer is neither an error nor an HTTP door's response with a statusCode of 400 or more)")
	step := fs.Duration("step", 3*time.Second, "the load at each N")
	budget := fs.Duration("max-time", maxProfile, "the whole profile at most (3m at most)")
	top := fs.Int("max-n", maxN, "the largest N to measure")
	check := fs.Bool("check", true, "run the function at the recommended N to check it (when -vcpus is this machine's)")
	scaleAt := fs.Float64("scale-at", 100*scaleAtDefault, "the CPU % the capacity provider scales at (its AverageCPUUtilization; deploy/template.yaml sets 60)")
	fs.Var((*stringList)(&cfg.Env), "env", "KEY=VALUE for the function's environment (repeatable)")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory for size.md (\"\": none)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadtest size -bootstrap PATH -events FILE [-vcpus V] [-json OUT] [flags]\n\nMeasures your function as N grows (CPU and wall time per invocation, memory per invocation in flight, throughput and p99), finds the knee and recommends PerExecutionEnvironmentMaxConcurrency, ConcurrencyPerVCpu and ExecutionEnvironmentMemoryGiBPerVCpu for V vCPUs. At most 3 minutes; loopback only.")
		fs.PrintDefaults()
	}
	if err := cfg.parse(fs, args); err != nil {
		return err
	}
	switch {
	case cfg.Bootstrap == "" || cfg.Events == "":
		return errors.New("size needs -bootstrap PATH and -events FILE")
	case cfg.Target != target.RIE && cfg.Target != target.Fake:
		return fmt.Errorf("-target %s: size runs the function here, in rie or fake", cfg.Target)
	case *vcpus < 1 || *step <= 0 || *budget <= 0 || *top < 1:
		return errors.New("-vcpus, -step, -max-time and -max-n must be positive")
	case *scaleAt <= 0 || *scaleAt > 100:
		return errors.New("-scale-at is a CPU share in percent, above 0 and at most 100")
	}
	if !cfg.given["target"] {
		cfg.Target = target.Default(cfg.stderr)
	}
	*budget = min(*budget, maxProfile)
	// The function's memory limit (GOMEMLIMIT for lmigo) must not bind
	// while it is measured: the machine's memory, unless -env says.
	if total, err := measure.MemTotalMB(); err == nil {
		cfg.MemoryMB = max(cfg.MemoryMB, total)
	}
	*top = min(*top, maxN)
	if !cfg.given["on-throttle"] {
		cfg.OnThrottle = throttleRetry // the sweep measures the function, not the race
	}
	bin, cleanup, err := target.UserBootstrap(cfg.Bootstrap)
	if err != nil {
		return inputError("-bootstrap", cfg.Bootstrap, err)
	}
	defer cleanup()
	if err := cfg.useEvents(); err != nil {
		return err
	}
	p := &sizeProfile{VCPUs: *vcpus, MachineCPUs: runtime.NumCPU(), Target: cfg.Target, Bootstrap: cfg.Bootstrap, Events: cfg.eventsDesc,
		ScaleAt: *scaleAt / 100, LossTarget: lossTarget}
	rt := target.Runtime{Name: target.Function, Binary: bin, SurvivesPanic: true}
	if cfg.Output, err = target.CreateOutput(cfg.Out, "size-function.log"); err != nil {
		return err
	}
	err = profileFunction(ctx, cfg, rt, p, *step, *budget, *top, *check)
	err = errors.Join(err, cfg.Output.Close())
	c := cfg.Output.Summary()
	p.Output = &c
	if p.Steps == nil {
		return err
	}
	if err != nil && p.rec.N == 0 {
		p.NoRecommendation = err.Error()
	}
	printSize(cfg.stdout, p)
	var werr error
	if *jsonOut != "" {
		b, jerr := json.MarshalIndent(p, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
		}
		if abs, aerr := filepath.Abs(*jsonOut); jerr == nil && aerr == nil {
			fmt.Fprintf(cfg.stdout, "written: %s\n", abs)
		}
		werr = errors.Join(werr, jerr)
	}
	if cfg.Out != "" {
		if merr := os.MkdirAll(cfg.Out, 0o755); merr != nil {
			werr = errors.Join(werr, merr)
		} else {
			md := filepath.Join(cfg.Out, "size.md")
			if merr := os.WriteFile(md, sizeMarkdown(p), 0o644); merr != nil {
				werr = errors.Join(werr, merr)
			} else if abs, aerr := filepath.Abs(md); aerr == nil {
				fmt.Fprintf(cfg.stdout, "written: %s\n", abs)
			}
		}
	}
	return errors.Join(err, werr)
}

// profileFunction sweeps N, recommends, and checks the recommendation; p
// holds what was measured even when it returns an error.
func profileFunction(ctx context.Context, cfg *config, rt target.Runtime, p *sizeProfile, step, budget time.Duration, top int, check bool) error {
	t0 := time.Now()
	deadline := t0.Add(budget)
	defer func() { p.Elapsed = dur(time.Since(t0).Round(time.Second)) }()
	last := step + stepStartup // the time of the last step, start and stop included
	memNote := ""              // set when memory lowers the largest N to measure
	for len(p.Steps) < 30 {
		// The largest N whose memory, predicted from the steps so far,
		// fits in half of what the machine has free.
		limit := top
		if free, err := measure.MemAvailableMiB(); err == nil && len(p.Steps) > 0 {
			if fit := fitMemory(p.Steps); fit.PerInvMiB > 0 {
				if m := int((memoryShare*free - fit.BaseMiB) / fit.PerInvMiB); m < limit {
					limit = max(m, 1)
					memNote = fmt.Sprintf("N=%d would take more than half of the machine's %.0f MiB free", limit+1, free)
				}
			}
		}
		n := nextN(p.Steps, limit)
		if n == 0 {
			if limit < top && knee(p.Steps) >= limit {
				p.KneeBound = memNote
			}
			break
		}
		// The step's time, predicted before it runs: a step at twice
		// the N may take twice as long to warm up and stop. The check
		// after the sweep takes about a step's start and stop and more.
		need := max(step+stepStartup, 2*last)
		if check {
			need += 2 * (checkFor + last) // a check, and one more
		}
		if time.Until(deadline) < need {
			p.KneeBound = fmt.Sprintf("the %s budget ran out", budget)
			break
		}
		ts := time.Now()
		s, err := measureStep(ctx, cfg, rt, n, step)
		if err != nil {
			return fmt.Errorf("at N=%d: %w", n, err)
		}
		last = time.Since(ts)
		s.Linear = s.Throughput > 0 && (s.N == 1 || linear(s, p.Steps[0]))
		// A step past the knee while other work took the machine's CPUs
		// is measured once more: the knee is the function's, not the
		// machine's noise.
		if !s.Linear && s.N > 1 && s.OtherCPUs > noisyCPUs && time.Until(deadline) > need {
			again, err := measureStep(ctx, cfg, rt, n, step)
			if err != nil {
				return fmt.Errorf("at N=%d: %w", n, err)
			}
			again.Linear, again.Remeasured = linear(again, p.Steps[0]), true
			if again.Throughput > s.Throughput {
				s = again
			}
			s.Remeasured = true
		}
		p.Steps = append(p.Steps, s)
		fmt.Fprintf(cfg.stderr, "size: N=%-4d %8.0f/s  p50 %-8s p99 %-8s CPU/inv %-8s peak RSS %-9s others %.2f CPUs  %s  (%s of at most %s)\n",
			s.N, s.Throughput, show.Millis(s.P50MS), show.Millis(s.P99MS), show.Millis(s.CPUMS), show.MiB(s.PeakRSSMiB), s.OtherCPUs,
			map[bool]string{true: "linear", false: "past the knee"}[s.Linear], time.Since(t0).Round(time.Second), budget)
	}
	switch {
	case slices.ContainsFunc(p.Steps, func(s sizeStep) bool { return !s.Linear }):
		// A step past the knee was seen: a budget that ended the
		// refinement made the knee coarser, not a bound.
		if p.KneeBound != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("The refinement of the knee stopped early (%s): the knee lies between N=%d and the next N measured.", p.KneeBound, knee(p.Steps)))
		}
		p.KneeBound = ""
	case len(p.Steps) > 0 && p.KneeBound == "" && knee(p.Steps) >= top:
		p.KneeBound = fmt.Sprintf("-max-n %d", top)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	window := min(checkFor, 2*step)
	return p.summarize(func(n int, rate float64) (*sizeCheck, error) {
		if !check || p.VCPUs != p.MachineCPUs {
			return nil, nil
		}
		if free, err := measure.MemAvailableMiB(); err != nil || p.fit().at(n) > memoryShare*free {
			p.Notes = append(p.Notes, fmt.Sprintf("Not checked: N=%d would take %.0f MiB, more than half of what this machine has free.", n, p.fit().at(n)))
			return nil, nil
		}
		if time.Until(deadline) < window+last {
			p.Notes = append(p.Notes, fmt.Sprintf("Not checked at N=%d: the %s budget (-max-time) ran out.", n, budget))
			return nil, nil
		}
		fmt.Fprintf(cfg.stderr, "size: checking N=%d, arrivals at random at %.0f/s, for %s\n", n, rate, window)
		return checkStep(ctx, cfg, rt, n, rate, window)
	})
}

// summarize derives the per-invocation figures, the knee and the
// recommendation from p.Steps, then runs check at the recommended N.
func (p *sizeProfile) summarize(check func(n int, rate float64) (*sizeCheck, error)) error {
	if len(p.Steps) == 0 || !p.Steps[0].Linear {
		return errors.New("the function did not answer at N=1")
	}
	if p.ScaleAt <= 0 {
		p.ScaleAt, p.LossTarget = scaleAtDefault, lossTarget
	}
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
	// Where the measurement bears Little's law out, the function's own
	// knee on this machine's CPUs is the measured one without the load
	// test's CPU and the other work's beside it: an environment runs
	// neither.
	p.FunctionKnee = float64(p.KneeN)
	if p.KneeAgrees && p.KneeBound == "" && p.CPUMS > 0 {
		p.FunctionKnee *= (p.CPUMS + p.DriverCPUMS) / p.CPUMS * float64(p.MachineCPUs) / p.HadCPUs
		// Never past the N at which the function alone keeps every CPU
		// busy: beyond it nothing is gained but queueing.
		p.FunctionKnee = max(float64(p.KneeN), min(p.FunctionKnee, p.LittleKnee))
	}
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
	// The knee for the vCPUs sized for: the function alone's on this
	// machine's CPUs, per CPU.
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

// settle sets the settings, the model's figures and the sentences from
// p.rec, once its N is final.
func (p *sizeProfile) settle() {
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
func disagreement(p *sizeProfile) string {
	if float64(p.KneeN) < p.LittleHere {
		return "the function stops scaling before its CPUs are busy: it waits on something shared (a lock, a pool, a downstream limit), or other work on this machine took the CPUs (see its share per step). The recommendation follows the measurement."
	}
	return "the function scales beyond its CPUs: its CPU time per invocation falls with N (shared work, caches), or its waiting is not on this machine."
}
