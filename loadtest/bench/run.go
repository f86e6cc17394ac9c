package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// Metric keys of RunResult.Metrics. A metric a target cannot measure is
// absent.
const (
	Invocations     = "invocations"      // answered in the measured window
	Throughput      = "throughput"       // answered per second
	P50             = "p50_us"           // latency percentiles, µs
	P90             = "p90_us"           //
	P99             = "p99_us"           //
	P999            = "p999_us"          //
	MaxLatency      = "max_us"           //
	CPUPerInv       = "cpu_per_inv_us"   // runtime's user+sys CPU per answered invocation
	DriverCPUPerInv = "driver_cpu_us"    // fake target: the load test's own CPU (fake API and callers) per answered invocation
	PeakRSS         = "peak_rss_mib"     // VmHWM at the end of the load
	RSSEnd          = "rss_end_mib"      // VmRSS at the end of the load
	RSSAfter        = "rss_after_mib"    // VmRSS after the idle period (= end without one)
	RSSBefore       = "rss_before_mib"   // grow: VmRSS after the warm-up and the settle pause, before the first wave
	RSSGrowth       = "rss_growth_mib"   // grow: RSS after - RSS before, per run
	GCs             = "gcs"              // GCs in the measured window
	GCsPer1k        = "gcs_per_1k"       // per 1000 invocations
	ConnsInit       = "conns_init"       // TCP connections opened during init
	ConnsPer1k      = "conns_per_1k"     // new connections per 1000 invocations
	Ready           = "ready_ms"         // exec to N polls outstanding
	ReadyCPU        = "ready_cpu_ms"     // fake target: the runtime's CPU time by then
	ThrottlesPer1k  = "throttles_per_1k" // throttled attempts per 1000 invocations
)

// RunResult is one run of one scenario on one runtime.
type RunResult struct {
	Scenario string             `json:"scenario"`
	Runtime  string             `json:"runtime"`
	Rep      int                `json:"rep"`
	CPUs     string             `json:"cpus,omitempty"` // the runtime's Cpus_allowed_list
	Metrics  map[string]float64 `json:"metrics"`
	Load     LoadCounts         `json:"load"`          // warm-up included
	API      *rapitest.Stats    `json:"api,omitempty"` // fake target only
	RSS      []measure.Sample   `json:"rssSamples,omitempty"`
	Problems []string           `json:"problems,omitempty"`
	// Profiled runs give the profile's figures only (ProfileMetric); their
	// others are left out of the medians.
	Profiled bool `json:"profiled,omitempty"`
	// Warnings do not fail the run but make its figures doubtful.
	Warnings []string `json:"warnings,omitempty"`
	// Exited says how the function ended when it exited during the load.
	Exited string `json:"exited,omitempty"`
	// Output sums up the output of a user's function.
	Output *target.OutputCounts `json:"output,omitempty"`
}

// LoadCounts is load.Stats without the histograms, for the report.
type LoadCounts struct {
	OK, FuncErrors, Wrong, Failures, Throttles, Abandoned int64
	MaxLagUS                                              float64       `json:",omitempty"`
	HTTPErrors                                            map[int]int64 `json:",omitempty"` // of Wrong, by status
}

// Answered is the invocations answered: OK + FuncErrors + Wrong.
func (c LoadCounts) Answered() int64 { return c.OK + c.FuncErrors + c.Wrong }

func (r *RunResult) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// liveRun is a run whose load is done and whose idle period may still run.
type liveRun struct {
	sc      *Scenario
	in      *target.Instance
	out     *target.Output // the user's function's output, kept by run
	res     RunResult
	total   load.Stats // warm-up and measured
	sampler *measure.Sampler
	loadEnd time.Time
}

// beginRun starts rt, waits for its init, sends the warm-up and the
// measured load, and takes the measurements of the load; with profile set,
// perf records the runtime meanwhile (see Settings.Profiled). Failures are
// recorded as problems of the result, never returned; a profile that
// fails is a warning.
func beginRun(ctx context.Context, s Settings, sc *Scenario, rt target.Runtime, rep int, profile bool) *liveRun {
	l := &liveRun{sc: sc, res: RunResult{Scenario: sc.Name, Runtime: rt.Name, Rep: rep, Profiled: profile, Metrics: map[string]float64{}}}
	if sc.Work.Panics && !rt.SurvivesPanic {
		l.res.problem("%s exits on a panic: workload %s refused for it", rt.Name, sc.Workload)
		return l
	}
	if !rt.Serves(sc.Work) {
		l.res.problem("%s serves tiny, size:S and wait:D only: workload %s refused for it", rt.Name, sc.Workload)
		return l
	}
	in, err := target.Start(ctx, s.Options, rt, sc.N, sc.PinCPU)
	if err != nil {
		l.res.problem("start: %v", err)
		return l
	}
	l.in = in
	if rt.Name == target.Function {
		l.out = s.Output
	}
	connsInit := l.init(s)

	// Accepted invocations are waited for past the window, but not forever;
	// not at all once the function has exited.
	lctx, cancel := context.WithTimeout(ctx, time.Duration(sc.Window)+s.Timeout+30*time.Second)
	defer cancel()
	lctx, watch := target.WatchExit(lctx, in)
	defer l.noteExit(watch)
	spec := load.Spec{
		Model: sc.Model, Callers: sc.Callers, Rate: sc.Rate,
		Count: sc.Warmup, Window: time.Duration(sc.Window), Items: sc.Work.Items, Pause: s.Pause,
		Next: s.OnThrottle == ThrottleNext, Answered: s.Answered,
	}
	l.warmUp(lctx, s, spec, watch)
	var prof *measure.Perf
	if profile && in.PID > 0 {
		if prof, err = measure.StartPerf(in.PID); err != nil {
			l.res.Warnings = append(l.res.Warnings, "profile: "+err.Error())
		}
	}
	st, profErr := l.measure(lctx, s, spec, connsInit, prof)
	l.atEnd(watch)
	if prof != nil {
		l.profile(ctx, prof, profErr)
	}
	if sc.PinCPU >= 0 && in.PID > 0 && l.res.CPUs != strconv.Itoa(sc.PinCPU) {
		l.res.problem("runtime not pinned: Cpus_allowed_list %q, want %d", l.res.CPUs, sc.PinCPU)
	}
	if st.MaxLag > 0 {
		l.res.Load.MaxLagUS = us(int64(st.MaxLag))
	}
	return l
}

// init takes the figures of the runtime's init and starts sampling its
// memory; it returns the connections the runtime opened during init.
func (l *liveRun) init(s Settings) int64 {
	in, m := l.in, l.res.Metrics
	if in.Ready > 0 {
		m[Ready] = ms(in.Ready)
	}
	if in.ReadyCPU > 0 {
		m[ReadyCPU] = ms(in.ReadyCPU)
	}
	if in.PID > 0 {
		t0 := time.Now().Add(-in.Ready)
		l.sampler = measure.NewSampler(in.Procs, s.SampleEvery, t0)
	}
	var connsInit int64
	if in.API != nil {
		connsInit = in.API.Stats().NewConns
		m[ConnsInit] = float64(connsInit)
	}
	return connsInit
}

// warmUp sends the warm-up: in waves, one invocation of each item, then
// -settle, then RSS is read before the burst; otherwise spec's count.
func (l *liveRun) warmUp(ctx context.Context, s Settings, spec load.Spec, watch *target.ExitWatch) {
	sc, in := l.sc, l.in
	switch {
	case sc.Work.Waved():
		l.total.Add(load.WarmUp(ctx, in.Inv, sc.Work.Warm, s.Pause))
		// RSS before the burst: after the warm-up (the handler's body
		// cache exists, as it will after the burst) and a pause longer
		// than lmigo's idle free, read the same way for every runtime.
		load.SleepCtx(ctx, time.Duration(sc.Settle))
		if mem, err := in.Status(); err == nil {
			l.res.Metrics[RSSBefore] = mib(mem.RSS)
		} else if in.PID > 0 && !watch.Exited() {
			l.res.problem("read memory before the load: %v", err)
		}
	case sc.Warmup > 0:
		l.total.Add(load.Run(ctx, in.Inv, spec))
	}
}

// measure sends the measured load and takes its figures; prof, when set,
// records the load alone. It returns the load's stats and the error of
// turning perf's events off.
func (l *liveRun) measure(ctx context.Context, s Settings, spec load.Spec, connsInit int64, prof *measure.Perf) (load.Stats, error) {
	sc, in := l.sc, l.in
	cpu0, _ := in.CPU()
	self0, _ := readCPU(os.Getpid())
	gc0 := gcCount(in)
	conns0 := connsInit
	if in.API != nil {
		conns0 = in.API.Stats().NewConns
	}
	var st load.Stats
	if sc.Work.Waved() {
		st = load.RunWaves(ctx, in.Inv, sc.Work.Waves(sc.N), sc.N, sc.Rounds, time.Duration(sc.Window), s.Pause)
	} else {
		spec.Count = sc.Count
		st = load.Run(ctx, in.Inv, spec)
	}
	l.loadEnd = time.Now()
	var profErr error
	if prof != nil {
		profErr = prof.Disable() // the profile is the load's
	}
	l.total.Add(st)
	l.perInvocation(st, cpu0, self0, gc0, conns0)
	return st, profErr
}

// perInvocation sets the load's figures: throughput, latency, throttles,
// and per invocation answered the runtime's CPU, this process's, GCs and
// connections, from the readings before the load.
func (l *liveRun) perInvocation(st load.Stats, cpu0, self0 time.Duration, gc0, conns0 int64) {
	in, m := l.in, l.res.Metrics
	answered := st.Answered()
	m[Invocations] = float64(answered)
	if answered == 0 {
		return
	}
	per1k := func(v int64) float64 { return float64(v) * 1000 / float64(answered) }
	m[Throughput] = float64(answered) / st.Elapsed.Seconds()
	latencyMetrics(st.Hist, m)
	m[ThrottlesPer1k] = per1k(st.Throttles)
	m[RejectedPct] = load.RejectedPct(answered, st.Throttles)
	if in.PID > 0 {
		if cpu1, err := in.CPU(); err == nil {
			m[CPUPerInv] = us(int64(cpu1-cpu0)) / float64(answered)
		}
	}
	// What the runtime shares the machine with: on few CPUs the fake
	// API and the callers bound inv/s as much as the runtime does.
	if self1, err := readCPU(os.Getpid()); err == nil && in.API != nil {
		m[DriverCPUPerInv] = us(int64(self1-self0)) / float64(answered)
	}
	if in.GC != nil && in.PID > 0 {
		gcs := gcCount(in) - gc0
		m[GCs] = float64(gcs)
		m[GCsPer1k] = per1k(gcs)
	}
	if in.API != nil {
		m[ConnsPer1k] = per1k(in.API.Stats().NewConns - conns0)
	}
}

// atEnd reads the runtime's memory, and the CPUs it ran on, at the end
// of the load.
func (l *liveRun) atEnd(watch *target.ExitWatch) {
	in, m := l.in, l.res.Metrics
	if in.PID <= 0 {
		return
	}
	if mem, err := in.Status(); err == nil {
		m[PeakRSS], m[RSSEnd], m[RSSAfter] = mib(mem.Peak), mib(mem.RSS), mib(mem.RSS)
		l.res.CPUs = mem.CPUs
	} else if !watch.Exited() {
		l.res.problem("read memory of the runtime at the end of the load: %v", err)
	}
}

// profile reads the scheduler's share from prof, or warns why it cannot.
func (l *liveRun) profile(ctx context.Context, prof *measure.Perf, profErr error) {
	m := l.res.Metrics
	if share, err := prof.Finish(ctx); profErr != nil || err != nil {
		l.res.Warnings = append(l.res.Warnings, "profile: "+errors.Join(profErr, err).Error())
	} else {
		m[StartmPct], m[StopmPct], m[SchedPct], m[PerfSamples] = share.Startm, share.Stopm, share.Sched, float64(share.Samples)
	}
}

// noteExit makes a function's exit during the load the run's first
// problem.
func (l *liveRun) noteExit(w *target.ExitWatch) {
	if !w.Exited() {
		return
	}
	l.res.Exited = l.in.ExitStatus()
	l.res.Problems = append([]string{l.in.ExitProblem()}, l.res.Problems...)
}

// finish waits out the idle period, reads RSS again, stops the runtime and
// checks the accounting.
func (l *liveRun) finish(ctx context.Context) RunResult {
	if l.in == nil {
		return l.res
	}
	m := l.res.Metrics
	if idle := time.Duration(l.sc.Idle); idle > 0 && l.res.Exited == "" {
		load.SleepCtx(ctx, time.Until(l.loadEnd.Add(idle)))
		if s, err := l.in.Status(); err == nil {
			m[RSSAfter] = mib(s.RSS)
			if before, ok := m[RSSBefore]; ok {
				m[RSSGrowth] = m[RSSAfter] - before
			}
		} else if l.in.PID > 0 {
			delete(m, RSSAfter)
			l.res.problem("read memory after the idle period: %v", err)
		}
	}
	if l.sampler != nil {
		l.res.RSS = l.sampler.Stop()
		if gap := maxGap(l.res.RSS); gap > stallWarning {
			l.res.Warnings = append(l.res.Warnings, fmt.Sprintf(
				"this load test was stalled for up to %s (RSS samples every %s): the machine was busy with something else; figures of this run are doubtful",
				gap.Round(100*time.Millisecond), l.sampler.Every()))
		}
	}
	t := l.total
	l.res.Load = LoadCounts{OK: t.OK, FuncErrors: t.FuncErrors, Wrong: t.Wrong, Failures: t.Failures, Throttles: t.Throttles,
		Abandoned: t.Abandoned, MaxLagUS: l.res.Load.MaxLagUS, HTTPErrors: t.HTTPErrors}
	if t.Failures > 0 && l.res.Exited != "" {
		l.res.problem("%d invocations left without an answer when the function exited, %d wrong answers", t.Failures, t.Wrong)
	} else if t.Failures > 0 || t.Wrong > 0 {
		http := ""
		if n := load.SumCounts(t.HTTPErrors); n > 0 {
			http = fmt.Sprintf(", %d of them HTTP errors (%s), wrong unless -expect accepts them", n, load.HTTPErrorCounts(t.HTTPErrors))
		}
		l.res.problem("%d invocations without an answer, %d wrong answers%s; first: %s", t.Failures, t.Wrong, http, t.FirstErr)
	}
	if l.in.API != nil {
		st := l.in.API.Stats()
		l.res.API = &st
		checkAPI(&l.res, st, t)
	}
	// The runtime's own words, never the emulator's: where a file keeps
	// the function's output, the report names it already.
	file := ""
	if l.out != nil {
		file = l.out.Summary().File
	}
	words := l.in.LastWords("")
	_ = l.in.Stop()
	if len(l.res.Problems) > 0 && words != "" && l.res.Exited == "" && file == "" {
		l.res.problem("the runtime's %s", words)
	}
	return l.res
}

// stallWarning is the gap between two RSS samples (taken every 100 ms by
// this process) above which the run is flagged: this process, and so most
// likely the whole machine, did not run for that long.
const stallWarning = time.Second

// maxGap is the longest time between two samples.
func maxGap(ss []measure.Sample) time.Duration {
	var gap time.Duration
	for i := 1; i < len(ss); i++ {
		gap = max(gap, ss[i].At-ss[i-1].At)
	}
	return gap
}

// checkAPI holds the fake API's accounting against the driver's: every
// invocation handed out answered exactly once, each answer the driver
// counted is one the API accepted, and the runtime never held more than N.
func checkAPI(r *RunResult, st rapitest.Stats, t load.Stats) {
	if st.Invocations != st.Answered() {
		r.problem("API: %d invocations handed out, %d answered", st.Invocations, st.Answered())
	}
	if got := st.Responses + st.Errors; got != t.Answered() {
		r.problem("API accepted %d answers, the driver counted %d", got, t.Answered())
	}
	if st.Throttles != t.Throttles {
		r.problem("API counted %d throttles, the driver %d", st.Throttles, t.Throttles)
	}
	if st.Violations > 0 {
		r.problem("API: %d protocol violations (more than N polls plus invocations in flight, max %d)", st.Violations, st.MaxOutstanding)
	}
	if n := st.Timeouts + st.Canceled + st.Aborted + st.Oversized + st.Truncated; n > 0 {
		r.problem("API: invocations ended badly: %d timeouts, %d canceled, %d aborted, %d too large, %d truncated",
			st.Timeouts, st.Canceled, st.Aborted, st.Oversized, st.Truncated)
	}
	if st.CrossWired > 0 || target.Echoes(r.Runtime) && st.NoEcho > 0 {
		r.problem("API: %d answers echoed another invocation's ID (cross-wired), %d echoed none", st.CrossWired, st.NoEcho)
	}
	if st.BadRequests+st.Late+st.TooLarge > 0 {
		r.problem("API: answered the runtime %d x 400 (%d unknown, %d duplicate), %d x 410, %d x 413",
			st.BadRequests, st.Unknown, st.Duplicates, st.Late, st.TooLarge)
	}
}

// latencyMetrics sets the percentiles of h (nanoseconds) in m, in µs.
func latencyMetrics(h *hdrhistogram.Histogram, m map[string]float64) {
	for _, p := range []struct {
		key string
		pct float64
	}{{P50, 50}, {P90, 90}, {P99, 99}, {P999, 99.9}} {
		m[p.key] = us(h.ValueAtPercentile(p.pct))
	}
	m[MaxLatency] = us(h.Max())
}

func readCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("no process")
	}
	c, err := measure.ReadCPU(pid)
	return c.Total(), err
}

func gcCount(in *target.Instance) int64 {
	if in.GC == nil {
		return 0
	}
	return in.GC.Count()
}

func us(ns int64) float64        { return float64(ns) / 1e3 }
func ms(d time.Duration) float64 { return float64(d) / 1e6 }
func mib(bytes int64) float64    { return float64(bytes) / (1 << 20) }

// The scheduler's share of a runtime's CPU (-profile). Below saturation a
// goroutine hand-off readies a goroutine, the Go scheduler wakes an idle P
// to run it (runtime.startm) and, finding nothing, puts it back to sleep
// (runtime.stopm). perf record samples the runtime's process from outside
// while the measured load runs, kernel stacks included, so the wake and
// sleep of the thread under those two functions count in their share. The
// profile is taken in one more run per profiled runtime after the measured
// ones: perf costs CPU on the same machine, and its run's other figures
// are not in the medians.
const (
	StartmPct   = "startm_pct"       // samples under runtime.startm, % of the runtime's CPU samples
	StopmPct    = "stopm_pct"        // under runtime.stopm
	SchedPct    = "startm_stopm_pct" // under either
	PerfSamples = "perf_samples"     // samples of the profile
)

// ProfileMetric says whether key is a figure of the profiled run only.
func ProfileMetric(key string) bool {
	switch key {
	case StartmPct, StopmPct, SchedPct, PerfSamples:
		return true
	}
	return false
}

// RejectedPct is the metric key of the rejection share: throttled attempts
// per 100 attempts (answered plus throttled) in the measured window.
const RejectedPct = "rejected_pct"
