package sizing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// The check runs the function at the recommended N, arrivals at random
// (Poisson) at the load the capacity provider scales at, on this
// machine. The recommendation is the N that held its check: one that
// turns away more than Erlang B and chance allow on a quiet machine is
// checked again a size up, within the latency and memory bounds; a p99
// over the one measured, or other work taking the machine, gives the
// same N one more check. No N that failed is printed as the answer: when
// none held, the report says plainly what to use, and why.

// maxChecks bounds the checks of one profile.
const maxChecks = 3

// judge says whether c holds: no wrong answer, no more throttles than
// the loss allowed (the larger of lossTarget and Erlang B at c's load, and
// three standard deviations of chance), and p99 within the one predicted.
func (c *Check) judge(wallMS float64) {
	c.Offered = c.Rate * wallMS / 1e3
	c.PredictedLoss = erlangB(c.N, c.Offered)
	c.LossAtSeen = erlangB(c.N, c.Rate*c.MeanMS/1e3)
	attempts := float64(c.Answered + c.Throttles)
	mean := math.Max(lossTarget, c.PredictedLoss) * attempts
	c.AllowedThrottles = int64(math.Ceil(mean + 3*math.Sqrt(mean) + 1))
	switch {
	case c.Answered == 0:
		c.Why = "no invocation was answered"
	case c.Wrong > 0:
		c.Why = fmt.Sprintf("%d invocations went wrong or had no answer", c.Wrong)
	case c.Throttles > c.AllowedThrottles:
		c.lossHigh = true
		c.Why = fmt.Sprintf("%d throttled (%s of %d attempts), more than the %d that Erlang B (%s at %.1f Erlangs) and chance allow",
			c.Throttles, fmtShare(float64(c.Throttles)/attempts), int64(attempts), c.AllowedThrottles, fmtShare(c.PredictedLoss), c.Offered)
	case c.PredictedP99MS > 0 && c.P99MS > c.PredictedP99MS:
		c.Why = fmt.Sprintf("p99 %s over the %s measured with every slot busy", show.Millis(c.P99MS), show.Millis(c.PredictedP99MS))
	}
	c.Holds = c.Why == ""
}

// predictP99 is the p99 the check at n may reach: that of the smallest
// step measured at n or above, every slot busy; above the steps, the
// largest one's, grown with N as the wall time does past the knee.
func predictP99(steps []Step, n int) float64 {
	var at, top *Step
	for i := range steps {
		s := &steps[i]
		if s.N >= n && (at == nil || s.N < at.N) {
			at = s
		}
		if top == nil || s.N > top.N {
			top = s
		}
	}
	switch {
	case at != nil:
		return at.P99MS
	case top != nil:
		return top.P99MS * float64(n) / float64(top.N)
	}
	return 0
}

// confirm checks p.rec with check, moving N as the checks say (see the
// top of the file); check returns nil when it does not run. It sets
// p.Checks, p.Confirmed, and p.Unconfirmed when checks ran and none held.
func (p *Profile) confirm(check func(n int, rate float64) (*Check, error)) error {
	most := 0.0
	for _, s := range p.Steps {
		most = max(most, s.Throughput)
	}
	// What this machine serves, the load test's CPU beside the function,
	// at the share the capacity provider scales at.
	rate := math.Max(1, p.ScaleAt*most)
	n, again := p.rec.N, false
	for len(p.Checks) < maxChecks {
		c, err := check(n, rate)
		if err != nil {
			return err
		}
		if c == nil {
			break
		}
		c.PredictedP99MS = predictP99(p.Steps, n)
		c.judge(p.WallMS)
		p.Checks = append(p.Checks, *c)
		if c.Holds {
			p.rec, p.Confirmed = p.rec.at(n, p.VCPUs, p.fit()), true
			return nil
		}
		// Throttles on a quiet machine ask for more slots; a busy moment
		// (p99 over, other work on the machine) for the same N once more.
		bound := min(p.rec.LatencyN, p.rec.MemoryN, MaxN)
		quiet := c.OtherCPUs <= noisyCPUs
		if next := n + max(1, n/4); c.lossHigh && quiet && next <= bound {
			n = next
			continue
		}
		if c.lossHigh && quiet || c.Wrong > 0 || again {
			break
		}
		again = true
	}
	if len(p.Checks) > 0 {
		last := p.Checks[len(p.Checks)-1]
		p.rec = p.rec.at(last.N, p.VCPUs, p.fit())
		p.Unconfirmed = unconfirmed(p, last)
	}
	return nil
}

// unconfirmed says plainly what to use when no N held its check.
func unconfirmed(p *Profile, last Check) string {
	s := fmt.Sprintf("No N held its check on this machine: at N=%d, %s. Use N=%d (the settings above and the SAM parameters follow it), and watch the function's throttles once deployed", last.N, last.Why, last.N)
	switch {
	case last.Wrong > 0:
		s += ": its answers went wrong at that N, which the steps below it did not show"
	case p.DriverCPUMS > 2*p.CPUMS:
		s += fmt.Sprintf("; the load test and the emulator took %s of CPU per invocation beside the function's %s, so at this rate they, not the function, set the throttles and the tail: this machine cannot confirm an N for a function this light", show.Millis(p.DriverCPUMS), show.Millis(p.CPUMS))
	case last.OtherCPUs > noisyCPUs:
		s += fmt.Sprintf("; other work took %.1f of the %d CPUs during the check, so its figures are this machine's more than the function's: size again on a quiet machine", last.OtherCPUs, p.MachineCPUs)
	case last.lossHigh && last.N >= min(p.rec.LatencyN, p.rec.MemoryN):
		s += fmt.Sprintf(": N=%d is as far as the latency and memory bounds go; more vCPUs per environment (-vcpus) serve the same load with room to spare", last.N)
	case last.lossHigh:
		s += fmt.Sprintf(": the time left (-max-time) did not allow a check above N=%d", last.N)
	default:
		s += fmt.Sprintf("; other work took %.1f of the %d CPUs while sizing: size again on a quiet machine", p.OtherCPUs, p.MachineCPUs)
	}
	return s + "."
}

// checkStep runs the function at N=n for window, arrivals at random at
// rate (the same every run: a fixed seed), after a warm-up.
func checkStep(ctx context.Context, o target.Options, rt target.Runtime, items []load.Item, n int, rate float64, window time.Duration) (*Check, error) {
	if o.Output != nil {
		o.Output.Note("the check at N=%d, a fresh process", n)
	}
	in, err := target.Start(ctx, o, rt, n, -1)
	if err != nil {
		return nil, err
	}
	defer func() { _ = in.Stop() }()
	count := max(int(rate*window.Seconds()), 1)
	lctx, cancel := context.WithTimeout(ctx, window+load.OpenGrace+o.Timeout)
	defer cancel()
	lctx, watch := target.WatchExit(lctx, in)
	// A warm-up, so that a cold start's burst is not read as loss.
	warm := load.Spec{Model: load.ModelClosed, Callers: n, Count: 2 * n, Window: 2 * time.Second, Items: items}
	load.Run(lctx, in.Inv, warm)
	cpu0, _ := in.CPU()
	drv0, mach0 := driverCPU(in), measure.MachineBusy()
	st := load.Run(lctx, in.Inv, load.Spec{Model: load.ModelOpen, Rate: rate, Poisson: checkSeed, Count: count, Window: window + load.OpenGrace,
		Items: items, Next: true})
	cpu1, _ := in.CPU()
	drv1, mach1 := driverCPU(in), measure.MachineBusy()
	if watch.Exited() {
		return nil, errors.New(in.ExitProblem())
	}
	c := &Check{N: n, Rate: rate, Arrivals: "poisson", Seconds: window.Seconds(), Answered: st.Answered(),
		Throttles: st.Throttles, Wrong: st.Failures + st.Wrong}
	if mach0 > 0 && mach1 > mach0 && st.Elapsed > 0 {
		c.OtherCPUs = max(0, ((mach1-mach0)-(cpu1-cpu0)-(drv1-drv0)).Seconds()/st.Elapsed.Seconds())
	}
	if st.Answered() > 0 {
		c.P99MS = float64(st.Hist.ValueAtPercentile(99)) / 1e6
		c.MeanMS = st.Hist.Mean() / 1e6
	}
	return c, ctx.Err()
}

// checkSeed seeds the check's arrivals.
const checkSeed = 0x5eed

// checkLine says what a check saw, and whether it held.
func checkLine(c Check, scaleAt float64) string {
	verdict := "holds"
	if !c.Holds {
		verdict = "DOES NOT HOLD: " + c.Why
	}
	p99 := show.Millis(c.P99MS)
	if c.PredictedP99MS > 0 {
		p99 += " (at most " + show.Millis(c.PredictedP99MS) + ", measured with every slot busy)"
	}
	attempts := c.Answered + c.Throttles
	share := 0.0
	if attempts > 0 {
		share = float64(c.Throttles) / float64(attempts)
	}
	return fmt.Sprintf("Check at N=%d, arrivals at random at %.0f/s (%.0f%% of the most this machine served; %.1f Erlangs) for %.1f s, other work taking %.2f CPUs: %d answered, %d throttled (%s; Erlang B: %s at the wall time alone, %s at the %s seen here, the CPUs shared), p99 %s: %s.",
		c.N, c.Rate, 100*scaleAt, c.Offered, c.Seconds, c.OtherCPUs, c.Answered, c.Throttles, fmtShare(share), fmtShare(c.PredictedLoss),
		fmtShare(c.LossAtSeen), show.Millis(c.MeanMS), p99, verdict)
}
