package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// scenario is one load on one runtime configuration.
type scenario struct {
	Name     string        `json:"name"`
	Workload string        `json:"workload"`
	Events   string        `json:"events,omitempty"` // workload events: what they are
	N        int           `json:"n"`
	Model    string        `json:"model"`
	Callers  int           `json:"callers,omitempty"` // closed
	Rate     float64       `json:"rate,omitempty"`    // open, invocations/s
	Count    int           `json:"count"`
	Window   show.Duration `json:"window"`
	Warmup   int           `json:"warmup,omitempty"`
	Rounds   int           `json:"rounds,omitempty"` // grow
	Idle     show.Duration `json:"idle,omitempty"`   // wait after the load before RSS is read again
	Settle   show.Duration `json:"settle,omitempty"` // grow: wait after the warm-up before RSS is read first
	PinCPU   int           `json:"pinCPU"`           // -1: not pinned

	w load.Workload
}

// row is one scenario of a set: a workload at an N, in the closed model
// or, with a rate, in the open model at that many invocations per second.
type row struct {
	workload string
	n        int
	rate     float64 // open model; 0: the closed one (or -model open -rate)
	count    int     // before -count; 0: the workload's default
}

// name is WORKLOAD-nN, and -rR for the open model at R/s (tiny-n64-r1000).
func (r row) name() string {
	name := strings.ReplaceAll(r.workload, ":", "-") + "-n" + strconv.Itoa(r.n)
	if r.rate > 0 {
		name += "-r" + strconv.FormatFloat(r.rate, 'f', -1, 64)
	}
	return name
}

// newScenario builds the scenario of r from cfg; count 0 takes the
// workload's default. Without a rate of its own, the row takes -model and
// -rate.
func newScenario(cfg *config, r row) (scenario, error) {
	w, err := cfg.workload(r.workload)
	if err != nil {
		return scenario{}, err
	}
	n := r.n
	sc := scenario{
		Workload: r.workload,
		N:        n,
		Model:    cfg.Model,
		Rate:     cfg.Rate,
		Count:    r.count,
		Window:   show.Duration(cfg.Duration),
		Warmup:   cfg.Warmup,
		PinCPU:   -1,
		w:        w,
	}
	if r.workload == load.EventsWorkload {
		sc.Events = cfg.eventsDesc
	}
	if r.rate > 0 {
		sc.Model, sc.Rate = load.ModelOpen, r.rate
	}
	if cfg.Count > 0 {
		sc.Count = cfg.Count
	}
	if sc.Count <= 0 {
		sc.Count = 4000
	}
	// Two per slot at least, so that every slot has served before the
	// window opens; a tenth of the run at most: 200 warm-up invocations
	// of 6 MiB would take longer than the run.
	sc.Warmup = min(max(sc.Warmup, 2*n), max(sc.Count/10, 1))
	switch {
	case w.Waved():
		sc.Model, sc.Warmup, sc.Rate = load.ModelWaves, len(w.Warm), 0
		sc.Rounds = cfg.Rounds
		sc.Count = cfg.Rounds * len(w.Waves(n)) * n
		sc.Idle = show.Duration(cfg.Idle)
		sc.Settle = show.Duration(cfg.Settle)
		sc.Window = show.Duration(cfg.GrowWindow)
	case sc.Model == load.ModelOpen:
		// The window is the schedule and a grace in which an invocation
		// throttled near its end is still retried, unless -duration says.
		if !cfg.given["duration"] {
			sc.Window = show.Duration(time.Duration(float64(sc.Count)/sc.Rate*float64(time.Second)) + load.OpenGrace)
		}
	default:
		sc.Rate = 0
		sc.Callers = cfg.Callers
		if sc.Callers <= 0 {
			sc.Callers = n
		}
	}
	sc.Name = row{workload: r.workload, n: n, rate: sc.Rate}.name()
	if cfg.pinFor(n) {
		sc.PinCPU = cfg.CPU
	}
	return sc, nil
}

// Sets of scenarios (-set); the standard set, `make loadtest`, is both.
const (
	setStandard   = "standard"
	setSaturation = "saturation"
	setBelowSat   = "belowsat"
)

// saturationSet is the closed model: callers flat out.
var saturationSet = []row{
	{workload: "tiny", n: 1, count: 10000},
	{workload: "tiny", n: 8, count: 10000},
	{workload: "tiny", n: 64, count: 10000},
	// LMI's N goes up to 1600. 30000 invocations fill the 2 s window
	// there: with 10000, about 6 per slot, the ramp and the tail of 1600
	// callers moved inv/s by a fifth between runs.
	{workload: "tiny", n: 512, count: 30000},
	{workload: "tiny", n: 1600, count: 30000},
	{workload: "size:1KiB", n: 1, count: 10000},
	// About 1 GiB each, so that CPU per invocation is read to a few per
	// cent (parseScenarioName).
	{workload: "size:1MiB", n: 1, count: 1024},
	{workload: "size:6MiB", n: 1, count: 170},
	{workload: "grow", n: 1},
	{workload: "grow", n: 8},
	{workload: "grow", n: 16},
	{workload: "grow", n: 32},
	{workload: "grow", n: 64},
}

// belowSatSet is where an LMI environment spends its life: the open model
// at rates the slots serve with room to spare, tiny and I/O-bound
// handlers, 10 s each (CPU time comes in 10 ms ticks), and a burst of
// grown stacks at N=1600. belowSatTargets checks them.
var belowSatSet = []row{
	{workload: "tiny", n: 64, rate: 1000, count: 10000},
	{workload: "tiny", n: 512, rate: 1000, count: 10000},
	{workload: "wait:20ms", n: 64, rate: 1000, count: 10000},
	{workload: "wait:50ms", n: 512, rate: 1500, count: 15000},
	{workload: "wait:100ms", n: 1600, rate: 1500, count: 15000},
	{workload: "stack:32KiB", n: 1600},
}

// setRows are the rows of the set named so.
func setRows(name string) ([]row, error) {
	switch name {
	case setStandard:
		return slices.Concat(saturationSet, belowSatSet), nil
	case setSaturation:
		return saturationSet, nil
	case setBelowSat:
		return belowSatSet, nil
	}
	return nil, fmt.Errorf("-set %q: want %s, %s or %s", name, setStandard, setSaturation, setBelowSat)
}

// Metric keys of runResult.Metrics. A metric a target cannot measure is
// absent.
const (
	mInvocations = "invocations"      // answered in the measured window
	mThroughput  = "throughput"       // answered per second
	mP50         = "p50_us"           // latency percentiles, µs
	mP90         = "p90_us"           //
	mP99         = "p99_us"           //
	mP999        = "p999_us"          //
	mMax         = "max_us"           //
	mCPU         = "cpu_per_inv_us"   // runtime's user+sys CPU per answered invocation
	mDriverCPU   = "driver_cpu_us"    // fake target: the load test's own CPU (fake API and callers) per answered invocation
	mPeakRSS     = "peak_rss_mib"     // VmHWM at the end of the load
	mRSSEnd      = "rss_end_mib"      // VmRSS at the end of the load
	mRSSAfter    = "rss_after_mib"    // VmRSS after the idle period (= end without one)
	mRSSBefore   = "rss_before_mib"   // grow: VmRSS after the warm-up and the settle pause, before the first wave
	mRSSGrowth   = "rss_growth_mib"   // grow: RSS after - RSS before, per run
	mGCs         = "gcs"              // GCs in the measured window
	mGCPer1k     = "gcs_per_1k"       // per 1000 invocations
	mConnsInit   = "conns_init"       // TCP connections opened during init
	mConnsPer1k  = "conns_per_1k"     // new connections per 1000 invocations
	mReady       = "ready_ms"         // exec to N polls outstanding
	mReadyCPU    = "ready_cpu_ms"     // fake target: the runtime's CPU time by then
	mThrottles   = "throttles_per_1k" // throttled attempts per 1000 invocations
)

// runResult is one run of one scenario on one runtime.
type runResult struct {
	Scenario string             `json:"scenario"`
	Runtime  string             `json:"runtime"`
	Rep      int                `json:"rep"`
	CPUs     string             `json:"cpus,omitempty"` // the runtime's Cpus_allowed_list
	Metrics  map[string]float64 `json:"metrics"`
	Load     loadCounts         `json:"load"`          // warm-up included
	API      *rapitest.Stats    `json:"api,omitempty"` // fake target only
	RSS      []measure.Sample   `json:"rssSamples,omitempty"`
	Problems []string           `json:"problems,omitempty"`
	// Profiled runs give the profile's figures only (profileMetric); their
	// others are left out of the medians.
	Profiled bool `json:"profiled,omitempty"`
	// Warnings do not fail the run but make its figures doubtful.
	Warnings []string `json:"warnings,omitempty"`
	// Exited says how the function ended when it exited during the load.
	Exited string `json:"exited,omitempty"`
	// Output sums up the output of a user's function.
	Output *target.OutputCounts `json:"output,omitempty"`

	hist *hdrhistogram.Histogram // measured window
}

// loadCounts is loadStats without the histogram, for the report.
type loadCounts struct {
	OK, FuncErrors, Wrong, Failures, Throttles, Abandoned int64
	MaxLagUS                                              float64       `json:",omitempty"`
	HTTPErrors                                            map[int]int64 `json:",omitempty"` // of Wrong, by status
}

func (c loadCounts) answered() int64 { return c.OK + c.FuncErrors + c.Wrong }

func (r *runResult) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// liveRun is a run whose load is done and whose idle period may still run.
type liveRun struct {
	sc      *scenario
	in      *target.Instance
	res     runResult
	total   load.Stats // warm-up and measured
	sampler *measure.Sampler
	loadEnd time.Time
}

// beginRun starts rt, waits for its init, sends the warm-up and the
// measured load, and takes the measurements of the load; with profile set,
// perf records the runtime meanwhile (see profiled). Failures are recorded
// as problems of the result, never returned; a profile that fails is a
// warning.
func beginRun(ctx context.Context, cfg *config, sc *scenario, rt target.Runtime, rep int, profile bool) *liveRun {
	l := &liveRun{sc: sc, res: runResult{Scenario: sc.Name, Runtime: rt.Name, Rep: rep, Profiled: profile, Metrics: map[string]float64{}}}
	m := l.res.Metrics
	if sc.w.Panics && !rt.SurvivesPanic {
		l.res.problem("%s exits on a panic: workload %s refused for it", rt.Name, sc.Workload)
		return l
	}
	if !rt.Serves(sc.w) {
		l.res.problem("%s serves tiny, size:S and wait:D only: workload %s refused for it", rt.Name, sc.Workload)
		return l
	}
	in, err := target.Start(ctx, cfg.Options, rt, sc.N, sc.PinCPU)
	if err != nil {
		l.res.problem("start: %v", err)
		return l
	}
	l.in = in
	if in.Ready > 0 {
		m[mReady] = ms(in.Ready)
	}
	if in.ReadyCPU > 0 {
		m[mReadyCPU] = ms(in.ReadyCPU)
	}
	if in.PID > 0 {
		t0 := time.Now().Add(-in.Ready)
		l.sampler = measure.NewSampler(in.Procs, cfg.SampleEvery, t0)
	}
	var connsInit int64
	if in.API != nil {
		connsInit = in.API.Stats().NewConns
		m[mConnsInit] = float64(connsInit)
	}

	// Accepted invocations are waited for past the window, but not forever;
	// not at all once the function has exited.
	lctx, cancel := context.WithTimeout(ctx, time.Duration(sc.Window)+cfg.Timeout+30*time.Second)
	defer cancel()
	lctx, watch := target.WatchExit(lctx, in)
	defer l.noteExit(watch)
	spec := load.Spec{
		Model: sc.Model, Callers: sc.Callers, Rate: sc.Rate,
		Count: sc.Warmup, Window: time.Duration(sc.Window), Items: sc.w.Items, Pause: cfg.Pause,
		Next: cfg.OnThrottle == throttleNext, Answered: cfg.answered,
	}
	switch {
	case sc.w.Waved():
		l.total.Add(load.WarmUp(lctx, in.Inv, sc.w.Warm, cfg.Pause))
		// RSS before the burst: after the warm-up (the handler's body
		// cache exists, as it will after the burst) and a pause longer
		// than lmigo's idle free, read the same way for every runtime.
		load.SleepCtx(lctx, time.Duration(sc.Settle))
		if s, err := in.Status(); err == nil {
			m[mRSSBefore] = mib(s.RSS)
		} else if in.PID > 0 && !watch.Exited() {
			l.res.problem("read memory before the load: %v", err)
		}
	case sc.Warmup > 0:
		l.total.Add(load.Run(lctx, in.Inv, spec))
	}

	var prof *measure.Perf
	if profile && in.PID > 0 {
		if prof, err = measure.StartPerf(in.PID); err != nil {
			l.res.Warnings = append(l.res.Warnings, "profile: "+err.Error())
		}
	}
	cpu0, _ := in.CPU()
	self0, _ := readCPU(os.Getpid())
	gc0 := gcCount(in)
	conns0 := connsInit
	if in.API != nil {
		conns0 = in.API.Stats().NewConns
	}
	var st load.Stats
	if sc.w.Waved() {
		st = load.RunWaves(lctx, in.Inv, sc.w.Waves(sc.N), sc.N, sc.Rounds, time.Duration(sc.Window), cfg.Pause)
	} else {
		spec.Count = sc.Count
		st = load.Run(lctx, in.Inv, spec)
	}
	l.loadEnd = time.Now()
	var profErr error
	if prof != nil {
		profErr = prof.Disable() // the profile is the load's
	}
	l.total.Add(st)
	l.res.hist = st.Hist

	answered := st.Answered()
	m[mInvocations] = float64(answered)
	if answered > 0 {
		per1k := func(v int64) float64 { return float64(v) * 1000 / float64(answered) }
		m[mThroughput] = float64(answered) / st.Elapsed.Seconds()
		latencyMetrics(st.Hist, m)
		m[mThrottles] = per1k(st.Throttles)
		m[mRejected] = load.RejectedPct(answered, st.Throttles)
		if in.PID > 0 {
			if cpu1, err := in.CPU(); err == nil {
				m[mCPU] = us(int64(cpu1-cpu0)) / float64(answered)
			}
		}
		// What the runtime shares the machine with: on few CPUs the fake
		// API and the callers bound inv/s as much as the runtime does.
		if self1, err := readCPU(os.Getpid()); err == nil && in.API != nil {
			m[mDriverCPU] = us(int64(self1-self0)) / float64(answered)
		}
		if in.GC != nil && in.PID > 0 {
			gcs := gcCount(in) - gc0
			m[mGCs] = float64(gcs)
			m[mGCPer1k] = per1k(gcs)
		}
		if in.API != nil {
			m[mConnsPer1k] = per1k(in.API.Stats().NewConns - conns0)
		}
	}
	if in.PID > 0 {
		if s, err := in.Status(); err == nil {
			m[mPeakRSS], m[mRSSEnd], m[mRSSAfter] = mib(s.Peak), mib(s.RSS), mib(s.RSS)
			l.res.CPUs = s.CPUs
		} else if !watch.Exited() {
			l.res.problem("read memory of the runtime at the end of the load: %v", err)
		}
	}
	if prof != nil {
		if share, err := prof.Finish(ctx); profErr != nil || err != nil {
			l.res.Warnings = append(l.res.Warnings, "profile: "+errors.Join(profErr, err).Error())
		} else {
			m[mStartm], m[mStopm], m[mSched], m[mPerfN] = share.Startm, share.Stopm, share.Sched, float64(share.Samples)
		}
	}
	if sc.PinCPU >= 0 && in.PID > 0 && l.res.CPUs != strconv.Itoa(sc.PinCPU) {
		l.res.problem("runtime not pinned: Cpus_allowed_list %q, want %d", l.res.CPUs, sc.PinCPU)
	}
	if st.MaxLag > 0 {
		l.res.Load.MaxLagUS = us(int64(st.MaxLag))
	}
	return l
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
func (l *liveRun) finish(ctx context.Context) runResult {
	if l.in == nil {
		return l.res
	}
	m := l.res.Metrics
	if idle := time.Duration(l.sc.Idle); idle > 0 && l.res.Exited == "" {
		load.SleepCtx(ctx, time.Until(l.loadEnd.Add(idle)))
		if s, err := l.in.Status(); err == nil {
			m[mRSSAfter] = mib(s.RSS)
			if before, ok := m[mRSSBefore]; ok {
				m[mRSSGrowth] = m[mRSSAfter] - before
			}
		} else if l.in.PID > 0 {
			delete(m, mRSSAfter)
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
	l.res.Load = loadCounts{OK: t.OK, FuncErrors: t.FuncErrors, Wrong: t.Wrong, Failures: t.Failures, Throttles: t.Throttles,
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
	tail := l.in.Tail()
	_ = l.in.Stop()
	if len(l.res.Problems) > 0 && tail != "" && l.res.Exited == "" {
		l.res.problem("last output of the runtime:\n%s", tail)
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
func checkAPI(r *runResult, st rapitest.Stats, t load.Stats) {
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
	}{{mP50, 50}, {mP90, 90}, {mP99, 99}, {mP999, 99.9}} {
		m[p.key] = us(h.ValueAtPercentile(p.pct))
	}
	m[mMax] = us(h.Max())
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

func us(ns int64) float64            { return float64(ns) / 1e3 }
func ms(d time.Duration) float64     { return float64(d) / 1e6 }
func mib(bytes int64) float64        { return float64(bytes) / (1 << 20) }
func fromUS(v float64) time.Duration { return time.Duration(v * 1e3) }
