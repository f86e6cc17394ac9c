package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// What size measures of a step, and of the machine around it: the
// function's CPU and memory, the load test's CPU beside it, what other
// work took, and the machine's memory.

// measureStep starts the function at N=n and runs n closed-loop callers
// for window after a warm-up.
func measureStep(ctx context.Context, cfg *config, rt runtimeSpec, n int, window time.Duration) (sizeStep, error) {
	s := sizeStep{N: n}
	if cfg.fnOut != nil {
		cfg.fnOut.note("N=%d, a fresh process", n)
	}
	in, err := start(ctx, cfg, rt, n, -1)
	if err != nil {
		return s, err
	}
	defer func() { _ = in.stop() }()
	if st, err := in.status(); err == nil {
		s.BaseRSSMiB = mib(st.RSS)
	}
	spec := loadSpec{model: modelClosed, callers: n, count: 2 * n, window: min(window, 2*time.Second),
		items: cfg.userItems, pause: cfg.Pause, next: cfg.OnThrottle == throttleNext}
	lctx, cancel := context.WithTimeout(ctx, 2*window+cfg.Timeout)
	defer cancel()
	lctx, watch := watchExit(lctx, in)
	warm := runLoad(lctx, in.inv, spec)
	if watch.exited() {
		return s, errors.New(in.exitProblem())
	}
	if bad := warm.Failures + warm.Wrong; bad > 0 {
		return s, fmt.Errorf("%d of the warm-up's invocations went wrong%s; first: %s\n%s", bad, httpWords(warm.HTTPErrors), warm.FirstErr, in.tail())
	}
	cpu0, _ := in.cpu()
	drv0, mach0 := driverCPU(in), machineBusy()
	spec.count, spec.window = max(1000*n, 100000), window
	st := runLoad(lctx, in.inv, spec)
	cpu1, _ := in.cpu()
	drv1, mach1 := driverCPU(in), machineBusy()
	if watch.exited() {
		return s, errors.New(in.exitProblem())
	}
	if bad := st.Failures + st.Wrong; bad > 0 {
		return s, fmt.Errorf("%d invocations went wrong%s; first: %s\n%s", bad, httpWords(st.HTTPErrors), st.FirstErr, in.tail())
	}
	answered := st.answered()
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
	if ps, err := in.status(); err == nil {
		s.PeakRSSMiB = mib(ps.Peak)
	}
	return s, ctx.Err()
}

// driverCPU is the CPU time of this process and of the runtime's helpers.
func driverCPU(in *instance) time.Duration {
	t, _ := readCPU(os.Getpid())
	for _, pid := range in.helpers {
		c, _ := readCPU(pid)
		t += c
	}
	return t
}

// machineBusy is the CPU time the whole machine has spent not idle, from
// /proc/stat (0 when unreadable).
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i == 3 || i == 4 || i >= 7 { // idle, iowait; steal and guest are not ours
			continue
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}

// memAvailableMiB is the machine's MemAvailable.
func memAvailableMiB() (float64, error) {
	kb, err := meminfo("MemAvailable")
	return kb / 1024, err
}

// memTotalMB is the machine's MemTotal in MB, as Lambda counts memory.
func memTotalMB() (int, error) {
	kb, err := meminfo("MemTotal")
	return int(kb / 1024), err
}

// meminfo is the figure of /proc/meminfo named key, in kB.
func meminfo(key string) (float64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/meminfo", key)
}
