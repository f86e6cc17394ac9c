package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// dur is a time.Duration written as "1.5s" in JSON.
type dur time.Duration

func (d dur) MarshalText() ([]byte, error) { //nolint:unparam // encoding.TextMarshaler
	return []byte(time.Duration(d).String()), nil
}

// scenario is one load on one runtime configuration.
type scenario struct {
	Name     string  `json:"name"`
	Workload string  `json:"workload"`
	N        int     `json:"n"`
	Model    string  `json:"model"`
	Callers  int     `json:"callers,omitempty"` // closed
	Rate     float64 `json:"rate,omitempty"`    // open, invocations/s
	Count    int     `json:"count"`
	Window   dur     `json:"window"`
	Warmup   int     `json:"warmup,omitempty"`
	Rounds   int     `json:"rounds,omitempty"` // grow
	Idle     dur     `json:"idle,omitempty"`   // wait after the load before RSS is read again
	Settle   dur     `json:"settle,omitempty"` // grow: wait after the warm-up before RSS is read first
	PinCPU   int     `json:"pinCPU"`           // -1: not pinned

	w workload
}

// newScenario builds a scenario of workload wl at N = n from cfg; count 0
// takes the workload's default.
func newScenario(cfg *config, wl string, n, count int) (scenario, error) {
	w, err := parseWorkload(wl)
	if err != nil {
		return scenario{}, err
	}
	sc := scenario{
		Name:     scenarioName(wl, n),
		Workload: wl,
		N:        n,
		Model:    cfg.Model,
		Count:    count,
		Window:   dur(cfg.Duration),
		Warmup:   cfg.Warmup,
		PinCPU:   -1,
		w:        w,
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
	case w.grow:
		// The warm-up is one invocation of each size (growWarmup).
		sc.Model, sc.Warmup = "waves", len(growSizes)
		sc.Rounds = cfg.Rounds
		sc.Count = cfg.Rounds * len(growSizes) * n
		sc.Idle = dur(cfg.Idle)
		sc.Settle = dur(cfg.Settle)
		sc.Window = dur(cfg.GrowWindow)
	case sc.Model == modelOpen:
		sc.Rate = cfg.Rate
	default:
		sc.Callers = cfg.Callers
		if sc.Callers <= 0 {
			sc.Callers = n
		}
	}
	if cfg.pinFor(n) {
		sc.PinCPU = cfg.CPU
	}
	return sc, nil
}

func scenarioName(wl string, n int) string {
	return strings.ReplaceAll(wl, ":", "-") + "-n" + strconv.Itoa(n)
}

// The standard comparison: what `make loadtest` runs.
var standardSet = []struct {
	workload string
	n        int
	count    int // before -count
}{
	{"tiny", 1, 10000},
	{"tiny", 8, 10000},
	{"tiny", 64, 10000},
	// LMI's N goes up to 1600. 30000 invocations fill the 2 s window
	// there: with 10000, about 6 per slot, the ramp and the tail of 1600
	// callers moved inv/s by a fifth between runs.
	{"tiny", 512, 30000},
	{"tiny", 1600, 30000},
	{"size:1KiB", 1, 10000},
	// About 1 GiB each, so that CPU per invocation is read to a few per
	// cent (parseScenarioName).
	{"size:1MiB", 1, 1024},
	{"size:6MiB", 1, 170},
	{"grow", 1, 0},
	{"grow", 8, 0},
	{"grow", 16, 0},
	{"grow", 32, 0},
	{"grow", 64, 0},
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
	// Warnings do not fail the run but make its figures doubtful.
	Warnings []string `json:"warnings,omitempty"`

	hist *hdrhistogram.Histogram // measured window
}

// loadCounts is loadStats without the histogram, for the report.
type loadCounts struct {
	OK, FuncErrors, Wrong, Failures, Throttles, Abandoned int64
	MaxLagUS                                              float64 `json:",omitempty"`
}

func (c loadCounts) answered() int64 { return c.OK + c.FuncErrors + c.Wrong }

func (r *runResult) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// liveRun is a run whose load is done and whose idle period may still run.
type liveRun struct {
	sc      *scenario
	in      *instance
	res     runResult
	total   loadStats // warm-up and measured
	sampler *measure.Sampler
	loadEnd time.Time
}

// beginRun starts rt, waits for its init, sends the warm-up and the
// measured load, and takes the measurements of the load. Failures are
// recorded as problems of the result, never returned.
func beginRun(ctx context.Context, cfg *config, sc *scenario, rt runtimeSpec, rep int) *liveRun {
	l := &liveRun{sc: sc, res: runResult{Scenario: sc.Name, Runtime: rt.Name, Rep: rep, Metrics: map[string]float64{}}}
	m := l.res.Metrics
	if sc.w.panics && !rt.SurvivesPanic {
		l.res.problem("%s exits on a panic: workload %s refused for it", rt.Name, sc.Workload)
		return l
	}
	if !rt.serves(sc.w) {
		l.res.problem("%s serves tiny and size:S only: workload %s refused for it", rt.Name, sc.Workload)
		return l
	}
	in, err := start(ctx, cfg, rt, sc.N, sc.PinCPU)
	if err != nil {
		l.res.problem("start: %v", err)
		return l
	}
	l.in = in
	if in.ready > 0 {
		m[mReady] = ms(in.ready)
	}
	if in.readyCPU > 0 {
		m[mReadyCPU] = ms(in.readyCPU)
	}
	if in.pid > 0 {
		t0 := time.Now().Add(-in.ready)
		l.sampler = measure.NewSampler(func() []int { return []int{in.pid} }, cfg.SampleEvery, t0)
	}
	var connsInit int64
	if in.api != nil {
		connsInit = in.api.Stats().NewConns
		m[mConnsInit] = float64(connsInit)
	}

	// Accepted invocations are waited for past the window, but not forever.
	lctx, cancel := context.WithTimeout(ctx, time.Duration(sc.Window)+cfg.Timeout+30*time.Second)
	defer cancel()
	spec := loadSpec{
		model: sc.Model, callers: sc.Callers, rate: sc.Rate,
		count: sc.Warmup, window: time.Duration(sc.Window), items: sc.w.items, pause: cfg.Pause,
		next: cfg.OnThrottle == throttleNext,
	}
	switch {
	case sc.w.grow:
		l.total.add(growWarmup(lctx, in.inv, cfg.Pause))
		// RSS before the burst: after the warm-up (the handler's body
		// cache exists, as it will after the burst) and a pause longer
		// than lmigo's idle free, read the same way for every runtime.
		sleepCtx(lctx, time.Duration(sc.Settle))
		if s, err := measure.ReadStatus(in.pid); err == nil {
			m[mRSSBefore] = mib(s.RSS)
		} else if in.pid > 0 {
			l.res.problem("read memory before the load: %v", err)
		}
	case sc.Warmup > 0:
		l.total.add(runLoad(lctx, in.inv, spec))
	}

	cpu0, _ := readCPU(in.pid)
	self0, _ := readCPU(os.Getpid())
	gc0 := gcCount(in)
	conns0 := connsInit
	if in.api != nil {
		conns0 = in.api.Stats().NewConns
	}
	var st loadStats
	if sc.w.grow {
		st = growLoad(lctx, in.inv, sc.N, sc.Rounds, time.Duration(sc.Window), cfg.Pause)
	} else {
		spec.count = sc.Count
		st = runLoad(lctx, in.inv, spec)
	}
	l.loadEnd = time.Now()
	l.total.add(st)
	l.res.hist = st.Hist

	answered := st.answered()
	m[mInvocations] = float64(answered)
	if answered > 0 {
		per1k := func(v int64) float64 { return float64(v) * 1000 / float64(answered) }
		m[mThroughput] = float64(answered) / st.Elapsed.Seconds()
		latencyMetrics(st.Hist, m)
		m[mThrottles] = per1k(st.Throttles)
		m[mRejected] = rejectedPct(answered, st.Throttles)
		if in.pid > 0 {
			if cpu1, err := readCPU(in.pid); err == nil {
				m[mCPU] = us(int64(cpu1-cpu0)) / float64(answered)
			}
		}
		// What the runtime shares the machine with: on few CPUs the fake
		// API and the callers bound inv/s as much as the runtime does.
		if self1, err := readCPU(os.Getpid()); err == nil && in.api != nil {
			m[mDriverCPU] = us(int64(self1-self0)) / float64(answered)
		}
		if in.gc != nil && in.pid > 0 {
			gcs := gcCount(in) - gc0
			m[mGCs] = float64(gcs)
			m[mGCPer1k] = per1k(gcs)
		}
		if in.api != nil {
			m[mConnsPer1k] = per1k(in.api.Stats().NewConns - conns0)
		}
	}
	if in.pid > 0 {
		if s, err := measure.ReadStatus(in.pid); err == nil {
			m[mPeakRSS], m[mRSSEnd], m[mRSSAfter] = mib(s.Peak), mib(s.RSS), mib(s.RSS)
			l.res.CPUs = s.CPUs
		} else {
			l.res.problem("read memory of the runtime at the end of the load: %v", err)
		}
	}
	if sc.PinCPU >= 0 && in.pid > 0 && l.res.CPUs != strconv.Itoa(sc.PinCPU) {
		l.res.problem("runtime not pinned: Cpus_allowed_list %q, want %d", l.res.CPUs, sc.PinCPU)
	}
	if st.MaxLag > 0 {
		l.res.Load.MaxLagUS = us(int64(st.MaxLag))
	}
	return l
}

// finish waits out the idle period, reads RSS again, stops the runtime and
// checks the accounting.
func (l *liveRun) finish(ctx context.Context) runResult {
	if l.in == nil {
		return l.res
	}
	m := l.res.Metrics
	if idle := time.Duration(l.sc.Idle); idle > 0 {
		sleepCtx(ctx, time.Until(l.loadEnd.Add(idle)))
		if s, err := measure.ReadStatus(l.in.pid); err == nil {
			m[mRSSAfter] = mib(s.RSS)
			if before, ok := m[mRSSBefore]; ok {
				m[mRSSGrowth] = m[mRSSAfter] - before
			}
		} else if l.in.pid > 0 {
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
	l.res.Load = loadCounts{t.OK, t.FuncErrors, t.Wrong, t.Failures, t.Throttles, t.Abandoned, l.res.Load.MaxLagUS}
	if t.Failures > 0 || t.Wrong > 0 {
		l.res.problem("%d invocations without an answer, %d wrong answers; first: %s", t.Failures, t.Wrong, t.FirstErr)
	}
	if l.in.api != nil {
		st := l.in.api.Stats()
		l.res.API = &st
		checkAPI(&l.res, st, t)
	}
	tail := l.in.tail()
	_ = l.in.stop()
	if len(l.res.Problems) > 0 && tail != "" {
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
func checkAPI(r *runResult, st rapitest.Stats, t loadStats) {
	if st.Invocations != st.Answered() {
		r.problem("API: %d invocations handed out, %d answered", st.Invocations, st.Answered())
	}
	if got := st.Responses + st.Errors; got != t.answered() {
		r.problem("API accepted %d answers, the driver counted %d", got, t.answered())
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
	if st.CrossWired > 0 || echoes(r.Runtime) && st.NoEcho > 0 {
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

func gcCount(in *instance) int64 {
	if in.gc == nil {
		return 0
	}
	return in.gc.Count()
}

func us(ns int64) float64            { return float64(ns) / 1e3 }
func ms(d time.Duration) float64     { return float64(d) / 1e6 }
func mib(bytes int64) float64        { return float64(bytes) / (1 << 20) }
func fromUS(v float64) time.Duration { return time.Duration(v * 1e3) }
