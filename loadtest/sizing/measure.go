package sizing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
)

// What size measures of a step, and of the machine around it: the
// function's CPU and memory, the load test's CPU beside it, what other
// work took, and the machine's memory.

// measureStep starts the function at N=n and runs n closed-loop callers
// for window after a warm-up.
func measureStep(ctx context.Context, o target.Options, rt target.Runtime, items []load.Item, n int, window time.Duration) (Step, error) {
	s := Step{N: n}
	if o.Output != nil {
		o.Output.Note("N=%d, a fresh process", n)
	}
	in, err := target.Start(ctx, o, rt, n, -1)
	if err != nil {
		return s, err
	}
	defer func() { _ = in.Stop() }()
	if st, err := in.Status(); err == nil {
		s.BaseRSSMiB = toMiB(st.RSS)
	}
	spec := load.Spec{Model: load.ModelClosed, Callers: n, Count: 2 * n, Window: min(window, 2*time.Second),
		Items: items}
	lctx, cancel := context.WithTimeout(ctx, 2*window+o.Timeout)
	defer cancel()
	lctx, watch := target.WatchExit(lctx, in)
	warm := load.Run(lctx, in.Inv, spec)
	if watch.Exited() {
		return s, errors.New(in.ExitProblem())
	}
	if bad := warm.Failures + warm.Wrong; bad > 0 {
		return s, fmt.Errorf("%d of the warm-up's invocations went wrong%s; first: %s%s", bad, load.HTTPWords(warm.HTTPErrors), warm.FirstErr, lastWords(in, o))
	}
	cpu0, _ := in.CPU()
	drv0, mach0 := driverCPU(in), measure.MachineBusy()
	spec.Count, spec.Window = max(1000*n, 100000), window
	st := load.Run(lctx, in.Inv, spec)
	cpu1, _ := in.CPU()
	drv1, mach1 := driverCPU(in), measure.MachineBusy()
	if watch.Exited() {
		return s, errors.New(in.ExitProblem())
	}
	if bad := st.Failures + st.Wrong; bad > 0 {
		return s, fmt.Errorf("%d invocations went wrong%s; first: %s%s", bad, load.HTTPWords(st.HTTPErrors), st.FirstErr, lastWords(in, o))
	}
	answered := st.Answered()
	if answered == 0 {
		return s, errors.New("no invocation answered")
	}
	s.Invocations, s.Throttles = answered, st.Throttles
	s.Throughput = float64(answered) / st.Elapsed.Seconds()
	s.MeanMS = st.Hist.Mean() / 1e6
	s.P50MS = float64(st.Hist.ValueAtPercentile(50)) / 1e6
	s.P90MS = float64(st.Hist.ValueAtPercentile(90)) / 1e6
	s.P99MS = float64(st.Hist.ValueAtPercentile(99)) / 1e6
	s.MaxMS = float64(st.Hist.Max()) / 1e6
	s.costs = eventCosts(st.Groups)
	s.CPUMS = float64(cpu1-cpu0) / 1e6 / float64(answered)
	s.DriverCPUMS = float64(drv1-drv0) / 1e6 / float64(answered)
	if mach0 > 0 && mach1 > mach0 {
		other := (mach1 - mach0) - (cpu1 - cpu0) - (drv1 - drv0)
		s.OtherCPUs = max(0, other.Seconds()/st.Elapsed.Seconds())
	}
	if ps, err := in.Status(); err == nil {
		s.PeakRSSMiB = toMiB(ps.Peak)
	}
	return s, ctx.Err()
}

// driverCPU is the CPU time of this process and of the runtime's helpers.
func driverCPU(in *target.Instance) time.Duration {
	t, _ := cpuOf(os.Getpid())
	for _, pid := range in.Helpers {
		c, _ := cpuOf(pid)
		t += c
	}
	return t
}

// cpuOf is the CPU time of process pid.
func cpuOf(pid int) (time.Duration, error) {
	c, err := measure.ReadCPU(pid)
	return c.Total(), err
}

// toMiB is bytes in MiB.
func toMiB(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// lastWords is where the function's last output is, for an error: the
// file that keeps it, or its own last lines, never the emulator's.
func lastWords(in *target.Instance, o target.Options) string {
	file := ""
	if o.Output != nil {
		file = o.Output.Summary().File
	}
	if w := in.LastWords(file); w != "" {
		return "; the function's " + w
	}
	return ""
}
