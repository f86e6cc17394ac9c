package main

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scripted is an invoker whose answers a test decides.
type scripted struct {
	calls    atomic.Int64
	stall    time.Duration // the target answers nothing for this long after the first call
	each     time.Duration // every call takes this long
	throttle bool          // every odd call is throttled
	fail     bool          // every call fails

	mu     sync.Mutex
	until  time.Time   // the end of the stall
	starts []time.Time // when each call came
}

func (s *scripted) Invoke(ctx context.Context, _ []byte) (outcome, error) {
	n := s.calls.Add(1)
	s.mu.Lock()
	now := time.Now()
	s.starts = append(s.starts, now)
	if s.until.IsZero() {
		s.until = now.Add(s.stall)
	}
	until := s.until
	s.mu.Unlock()
	if s.fail {
		return outcome{}, errors.New("connection refused")
	}
	if s.throttle && n%2 == 1 {
		return outcome{Throttled: true}, nil
	}
	if d := max(s.each, time.Until(until)); d > 0 {
		time.Sleep(d)
	}
	return outcome{Body: []byte(`{"ok":true}`), Latency: time.Microsecond}, nil
}

func tinyItems() []item { return []item{tinyItem()} }

// TestOpenLoopIntendedTime: a stall of the target delays every
// invocation that comes during it, and the open model charges each of them
// the delay from its intended send time; the closed model, whose one
// caller waits out the stall, sees one slow invocation only (coordinated
// omission).
func TestOpenLoopIntendedTime(t *testing.T) {
	const stall = 60 * time.Millisecond
	open := runLoad(t.Context(), &scripted{stall: stall}, loadSpec{
		model: modelOpen, rate: 1000, count: 20, window: 10 * time.Second, items: tinyItems(),
	})
	if got := open.answered(); got != 20 || open.OK != 20 {
		t.Fatalf("answered %d (ok %d), want 20", got, open.OK)
	}
	// Invocation k was intended at k ms, before the stall's end at ~60 ms.
	if min := time.Duration(open.Hist.Min()); min < stall-25*time.Millisecond {
		t.Errorf("open model: fastest latency %v, want >= %v: the delay of the stall is missing", min, stall-25*time.Millisecond)
	}

	closed := runLoad(t.Context(), &scripted{stall: stall}, loadSpec{
		model: modelClosed, callers: 1, count: 20, window: 10 * time.Second, items: tinyItems(),
	})
	if p50 := time.Duration(closed.Hist.ValueAtPercentile(50)); p50 > time.Millisecond {
		t.Errorf("closed model: p50 %v; it should see the target's own latency (1µs)", p50)
	}
}

// TestOpenLoopRate: the schedule keeps its rate: it never sends ahead of
// the clock (the k-th send comes k/rate after the start at the earliest),
// and does not record its own jitter as large latency.
func TestOpenLoopRate(t *testing.T) {
	const rate, count = 500, 50
	inv := &scripted{}
	t0 := time.Now()
	st := runLoad(t.Context(), inv, loadSpec{model: modelOpen, rate: rate, count: count, window: 10 * time.Second, items: tinyItems()})
	if st.answered() != count {
		t.Fatalf("answered %d, want %d", st.answered(), count)
	}
	starts := slices.SortedFunc(slices.Values(inv.starts), time.Time.Compare)
	for k, at := range starts {
		if due := t0.Add(time.Duration(k) * time.Second / rate); at.Before(due) {
			t.Fatalf("send %d at %v, before its time %v: the schedule ran ahead", k, at.Sub(t0), due.Sub(t0))
		}
	}
	if p50 := time.Duration(st.Hist.ValueAtPercentile(50)); p50 > 20*time.Millisecond {
		t.Errorf("p50 %v from the intended time, want small", p50)
	}
}

// heldAll is an invoker whose calls all wait until want of them have
// started: only a load that sends without waiting for answers gets them
// all, and answered.
type heldAll struct {
	want    int64
	started atomic.Int64
	all     chan struct{}
}

func (h *heldAll) Invoke(ctx context.Context, _ []byte) (outcome, error) {
	if h.started.Add(1) == h.want {
		close(h.all)
	}
	select {
	case <-h.all:
		return outcome{Body: []byte(`{"ok":true}`)}, nil
	case <-ctx.Done():
		return outcome{}, ctx.Err()
	}
}

// TestOpenLoopNeverWaits: the open model sends each invocation at its time
// whatever the ones before it do: 40 invocations none of which is answered
// before all 40 are sent are all answered. A load that waits for an answer
// before it sends more holds them until ctx ends (a bound far beyond the
// 20 ms schedule), and they fail.
func TestOpenLoopNeverWaits(t *testing.T) {
	const count = 40
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	inv := &heldAll{want: count, all: make(chan struct{})}
	st := runLoad(ctx, inv, loadSpec{model: modelOpen, rate: 2000, count: count, window: time.Minute, items: tinyItems()})
	if st.OK != count || st.Failures != 0 || inv.started.Load() != count {
		t.Fatalf("ok %d, failures %d, sent %d; want all %d sent before any answer, and answered", st.OK, st.Failures, inv.started.Load(), count)
	}
}

func TestLoadBounds(t *testing.T) {
	tests := []struct {
		name   string
		spec   loadSpec
		inv    *scripted
		check  func(t *testing.T, st loadStats, inv *scripted)
		within time.Duration
	}{
		{
			name: "count",
			spec: loadSpec{model: modelClosed, callers: 3, count: 100, window: time.Minute},
			inv:  &scripted{},
			check: func(t *testing.T, st loadStats, inv *scripted) {
				if st.OK != 100 || inv.calls.Load() != 100 {
					t.Errorf("ok %d, calls %d, want 100", st.OK, inv.calls.Load())
				}
			},
			within: 5 * time.Second,
		},
		{
			// The window ends the run: at most one invocation per 10 ms
			// (the bound a slow machine cannot break), and a few at least
			// (each may take 100 ms on a loaded one).
			name: "window",
			spec: loadSpec{model: modelClosed, callers: 1, count: 1_000_000, window: 500 * time.Millisecond},
			inv:  &scripted{each: 10 * time.Millisecond},
			check: func(t *testing.T, st loadStats, _ *scripted) {
				if st.OK < 2 || st.OK > 51 {
					t.Errorf("ok %d in a 500 ms window at 10 ms each", st.OK)
				}
			},
			within: 5 * time.Second,
		},
		{
			name: "open window",
			spec: loadSpec{model: modelOpen, rate: 100, count: 1_000_000, window: 500 * time.Millisecond},
			inv:  &scripted{},
			check: func(t *testing.T, st loadStats, _ *scripted) {
				if st.OK < 5 || st.OK > 52 {
					t.Errorf("ok %d in a 500 ms window at 100/s", st.OK)
				}
			},
			within: 5 * time.Second,
		},
		{
			name: "throttles retried and counted",
			spec: loadSpec{model: modelClosed, callers: 2, count: 40, window: time.Minute, pause: time.Millisecond},
			inv:  &scripted{throttle: true},
			check: func(t *testing.T, st loadStats, inv *scripted) {
				if st.OK != 40 || st.Throttles+st.OK != inv.calls.Load() || st.Throttles < 20 {
					t.Errorf("ok %d, throttles %d, calls %d", st.OK, st.Throttles, inv.calls.Load())
				}
			},
			within: 5 * time.Second,
		},
		{
			// A pause of an hour would fail within: next never waits.
			name: "throttles rejected, next sent at once",
			spec: loadSpec{model: modelClosed, callers: 2, count: 40, window: time.Minute, pause: time.Hour, next: true},
			inv:  &scripted{throttle: true},
			check: func(t *testing.T, st loadStats, inv *scripted) {
				if inv.calls.Load() != 40 || st.OK != 20 || st.Throttles != 20 || st.Abandoned != 0 {
					t.Errorf("calls %d, ok %d, throttles %d, abandoned %d; want 40 attempts, 20 ok, 20 rejected, 0 abandoned",
						inv.calls.Load(), st.OK, st.Throttles, st.Abandoned)
				}
				if got := rejectedPct(st.answered(), st.Throttles); got != 50 {
					t.Errorf("rejected %.1f%%, want 50%%", got)
				}
			},
			within: 5 * time.Second,
		},
		{
			name: "failures",
			spec: loadSpec{model: modelClosed, callers: 2, count: 10, window: time.Minute},
			inv:  &scripted{fail: true},
			check: func(t *testing.T, st loadStats, _ *scripted) {
				if st.Failures != 10 || st.answered() != 0 || st.FirstErr == "" {
					t.Errorf("failures %d, answered %d, first %q", st.Failures, st.answered(), st.FirstErr)
				}
			},
			within: 5 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.items = tinyItems()
			start := time.Now()
			st := runLoad(t.Context(), tt.inv, tt.spec)
			if d := time.Since(start); d > tt.within {
				t.Errorf("took %v, want under %v", d, tt.within)
			}
			tt.check(t, st, tt.inv)
		})
	}
}

func TestWavesLoad(t *testing.T) {
	for _, wl := range []string{"grow", "stack:32KiB"} {
		w, err := parseWorkload(wl)
		if err != nil {
			t.Fatal(err)
		}
		inv := &scripted{}
		// scripted answers {"ok":true}, which the size checks reject and
		// the stack's accepts: every answer is counted, and counted once.
		wave := w.waves(3)
		st := wavesLoad(t.Context(), inv, wave, 3, 2, time.Minute, time.Millisecond)
		want := int64(3 * 2 * len(wave))
		if st.answered() != want || inv.calls.Load() != want {
			t.Fatalf("%s: answered %d, calls %d; want %d", wl, st.answered(), inv.calls.Load(), want)
		}
		if wl == "grow" && st.Wrong != want || wl != "grow" && st.OK != want {
			t.Errorf("%s: %d ok, %d wrong", wl, st.OK, st.Wrong)
		}
	}
}

func TestPercentilesMedianRatio(t *testing.T) {
	h := newHist()
	for v := 1; v <= 1000; v++ {
		if err := h.RecordValue(int64(v) * int64(time.Microsecond)); err != nil {
			t.Fatal(err)
		}
	}
	m := map[string]float64{}
	latencyMetrics(h, m)
	for key, want := range map[string]float64{mP50: 500, mP90: 900, mP99: 990, mP999: 999, mMax: 1000} {
		if got := m[key]; got < want*0.999 || got > want*1.001 {
			t.Errorf("%s = %.3f µs, want %v within 0.1%%", key, got, want)
		}
	}

	for _, tt := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b, want float64
		ok         bool
	}{{1, 2, 0.5, true}, {0, 0, 1, true}, {3, 0, 0, false}, {0, 4, 0, true}} {
		if got, ok := ratio(tt.a, tt.b); got != tt.want || ok != tt.ok {
			t.Errorf("ratio(%v, %v) = %v, %v", tt.a, tt.b, got, ok)
		}
	}
}

func TestSummarize(t *testing.T) {
	sr := scenarioReport{Runs: []runResult{
		{Runtime: rtLmigo, Metrics: map[string]float64{mCPU: 40, mThroughput: 10}},
		{Runtime: rtRef, Metrics: map[string]float64{mCPU: 100}},
		{Runtime: rtLmigo, Metrics: map[string]float64{mCPU: 60, mThroughput: 30}},
		{Runtime: rtRef, Metrics: map[string]float64{mCPU: 80}},
		{Runtime: rtLmigo, Metrics: map[string]float64{mCPU: 1e9}, Problems: []string{"crashed"}},
	}}
	summarize(&sr, []runtimeSpec{{Name: rtLmigo}, {Name: rtRef}})
	if got := sr.Medians[rtLmigo][mCPU]; got != 50 {
		t.Errorf("lmigo median CPU %v, want 50 (a run with problems is left out)", got)
	}
	if got := sr.Ratios[mCPU]; got != 50.0/90 {
		t.Errorf("ratio %v, want %v", got, 50.0/90)
	}
	if _, ok := sr.Ratios[mThroughput]; ok {
		t.Errorf("ratio of a metric one runtime lacks")
	}
}

func TestSummarizeThreeRuntimes(t *testing.T) {
	sr := scenarioReport{Runs: []runResult{
		{Runtime: rtLmigo, Metrics: map[string]float64{mCPU: 40, mRSSGrowth: -1}},
		{Runtime: rtRaw, Metrics: map[string]float64{mCPU: 20, mRSSGrowth: 2}},
		{Runtime: rtRef, Metrics: map[string]float64{mCPU: 80, mRSSGrowth: 100}},
	}}
	summarize(&sr, []runtimeSpec{{Name: rtLmigo}, {Name: rtRaw}, {Name: rtRef}})
	if got, raw := sr.Ratios[mCPU], sr.MoreRatios[rtRaw][mCPU]; got != 0.5 || raw != 0.25 {
		t.Errorf("ratios lmigo %v, lmigo-raw %v; want 0.5, 0.25 (against aws-lambda-go)", got, raw)
	}
	if _, ok := sr.Ratios[mRSSGrowth]; ok {
		t.Errorf("a ratio of RSS differences")
	}
}

func TestScenarioNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		want row
		bad  bool
	}{
		{name: "size-1MiB-n1", want: row{workload: "size:1MiB", n: 1, count: 1024}}, // the standard set's
		{name: "tiny-n64-r1000", want: row{workload: "tiny", n: 64, rate: 1000, count: 10000}},
		{name: "wait-100ms-n1600-r1500", want: row{workload: "wait:100ms", n: 1600, rate: 1500, count: 15000}},
		{name: "stack-32KiB-n1600", want: row{workload: "stack:32KiB", n: 1600}},
		{name: "grow-n64", want: row{workload: "grow", n: 64}},
		{name: "size-256KiB-n1", want: row{workload: "size:256KiB", n: 1, count: 4096}},
		{name: "size-6MiB-n4", want: row{workload: "size:6MiB", n: 4, count: 170}},
		{name: "size-1KiB-n2", want: row{workload: "size:1KiB", n: 2, count: 10000}},
		{name: "grow-n32", want: row{workload: "grow", n: 32}},
		{name: "tiny-n8-r2000", want: row{workload: "tiny", n: 8, rate: 2000, count: 20000}},
		{name: "wait-5ms-n4-r250.5", want: row{workload: "wait:5ms", n: 4, rate: 250.5, count: 2505}},
		{name: "mix-panic-n8", want: row{workload: "mix-panic", n: 8}},
		{name: "grow", bad: true},
		{name: "grow-n0", bad: true},
		{name: "tiny-n8-r0", bad: true},
		{name: "tiny-n8-r", bad: true},
		{name: "size-9MiB-n1", bad: true},
		{name: "wait-1us-n1-r10", bad: true},
		{name: "nope-n1", bad: true},
	} {
		got, err := parseScenarioName(tt.name)
		if tt.bad != (err != nil) || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
		if err == nil && got.name() != tt.name {
			t.Errorf("%s: name written back %q", tt.name, got.name())
		}
	}
	for _, set := range []string{setStandard, setSaturation, setBelowSat} {
		for _, name := range setNames(set) {
			if r, err := parseScenarioName(name); err != nil || r.name() != name {
				t.Errorf("set %s: %s reads back as %+v, %v", set, name, r, err)
			}
		}
	}
	if _, err := setRows("fast"); err == nil {
		t.Error("-set fast accepted")
	}
}

// TestOpenScenarioWindow: an open row's window is its schedule, count/rate,
// and a grace for retries, unless -duration is given; a closed row's is
// -duration.
func TestOpenScenarioWindow(t *testing.T) {
	cfg := defaultConfig()
	open, err := newScenario(cfg, row{workload: "wait:20ms", n: 64, rate: 1000, count: 10000})
	if err != nil || open.Model != modelOpen || open.Rate != 1000 || time.Duration(open.Window) != 10*time.Second+openGrace || open.Name != "wait-20ms-n64-r1000" {
		t.Errorf("open row: %+v, %v", open, err)
	}
	closed, err := newScenario(cfg, row{workload: "tiny", n: 64, count: 10000})
	if err != nil || closed.Model != modelClosed || closed.Rate != 0 || time.Duration(closed.Window) != cfg.Duration || closed.Callers != 64 {
		t.Errorf("closed row: %+v, %v", closed, err)
	}
	stack, err := newScenario(cfg, row{workload: "stack:32KiB", n: 16})
	if err != nil || stack.Model != modelWaves || stack.Count != cfg.Rounds*16 || stack.Warmup != 1 || stack.Idle == 0 {
		t.Errorf("stack row: %+v, %v", stack, err)
	}
	cfg.given = map[string]bool{"duration": true}
	cfg.Duration = time.Second
	if sc, _ := newScenario(cfg, row{workload: "tiny", n: 64, rate: 1000, count: 10000}); time.Duration(sc.Window) != time.Second {
		t.Errorf("open row with -duration 1s: window %v", time.Duration(sc.Window))
	}
	cfg.Model, cfg.Rate = modelOpen, 500
	if sc, _ := newScenario(cfg, row{workload: "tiny", n: 8, count: 100}); sc.Model != modelOpen || sc.Rate != 500 || sc.Name != "tiny-n8-r500" {
		t.Errorf("-model open -rate 500 on a closed row: %+v", sc)
	}
}

func TestTargets(t *testing.T) {
	cfg := defaultConfig()
	cfg.Env = []string{"LMIGO_BUFFER_RETAIN_BYTES=256KiB"}
	sc, err := newScenario(cfg, row{workload: "grow", n: 64})
	if err != nil {
		t.Fatal(err)
	}
	sr := scenarioReport{Scenario: sc, Medians: map[string]map[string]float64{
		rtLmigo: {mRSSGrowth: 7.9, mPeakRSS: 41},
		rtRaw:   {mRSSGrowth: 24.1}, // 64 x 256 KiB + 8 MiB = 24 MiB
		rtRef:   {mRSSGrowth: 900},
	}}
	got := checkTargets(cfg, sr)
	want := []targetCheck{
		{Runtime: rtLmigo, What: "RSS after - RSS before <= 8 MiB", Value: 7.9, Limit: 8, Holds: true},
		{Runtime: rtLmigo, What: "peak RSS at N=64 <= 40 MiB", Value: 41, Limit: 40, Holds: false},
		{Runtime: rtRaw, What: "RSS after - RSS before <= N x retain cap + 8 MiB (64 x 256KiB + 8 MiB)", Value: 24.1, Limit: 24, Holds: false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets:\n%+v\nwant\n%+v", got, want)
	}
}

func TestWorkloads(t *testing.T) {
	for _, tt := range []struct {
		in      string
		items   int
		panics  bool
		waves   int // items of a wave
		floor   bool
		wantErr bool
	}{
		{in: "tiny", items: 1, floor: true},
		{in: "size:1KiB", items: 1, floor: true},
		{in: "size:6MiB", items: 1, floor: true},
		{in: "size:300", items: 1, floor: true},
		{in: "wait:20ms", items: 1, floor: true},
		{in: "wait:1s", items: 1, floor: true},
		{in: "mix", items: 8},
		{in: "mix-panic", items: 9, panics: true},
		{in: "grow", waves: 6},
		{in: "stack:32KiB", waves: 1},
		{in: "stack:16KiB", waves: 1},
		{in: "stack:48KiB", wantErr: true},
		{in: "stack:8KiB", wantErr: true},
		{in: "wait:0ms", wantErr: true},
		{in: "wait:1500us", wantErr: true},
		{in: "wait:soon", wantErr: true},
		{in: "size:7MiB", wantErr: true},
		{in: "size:1", wantErr: true},
		{in: "size:lots", wantErr: true},
		{in: "huge", wantErr: true},
		{in: "event:sqs", items: 1},
		{in: "event:github", items: 1},
		{in: "event:kinesis", wantErr: true},
	} {
		w, err := parseWorkload(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseWorkload(%q) err = %v", tt.in, err)
			continue
		}
		waves := 0
		if w.waved() {
			waves = len(w.waves(2))
		}
		if err == nil && (len(w.items) != tt.items || w.panics != tt.panics || waves != tt.waves || w.floor != tt.floor) {
			t.Errorf("parseWorkload(%q) = %d items, panics %v, %d a wave, floor %v", tt.in, len(w.items), w.panics, waves, w.floor)
		}
	}
	it := sizeItem(1 << 20)
	if it.name != "1MiB" || !it.check(outcome{Body: make([]byte, 1<<20)}) || it.check(outcome{Body: make([]byte, 10)}) {
		t.Errorf("sizeItem(1MiB) name %q or check wrong", it.name)
	}
	if !tinyItem().check(outcome{Body: []byte(`{"ok":true,"requestId":"x"}`)}) || tinyItem().check(outcome{FunctionError: "Error"}) {
		t.Error("tiny check wrong")
	}
	ev, _ := parseWorkload("event:s3")
	if c := ev.items[0].check; !c(outcome{Body: []byte(`{"objects":1}`)}) || c(outcome{Body: []byte(`{"obj`)}) ||
		c(outcome{FunctionError: "Error", Body: []byte(`{}`)}) {
		t.Error("event check wrong")
	}
	if lm, ref := bootstrapPkgs("event:s3"); lm != pkgEventsLmigo || ref != pkgEventsRef {
		t.Errorf("bootstrapPkgs(event:s3) = %s, %s", lm, ref)
	}
	cfg := defaultConfig()
	cfg.Workload = "event:s3"
	if env := bootstrapEnv(cfg, 1); !slices.Contains(env, "LOADTEST_EVENT=s3") {
		t.Errorf("bootstrapEnv for event:s3 lacks LOADTEST_EVENT: %v", env)
	}
	for _, tt := range []struct{ got, want string }{
		{string(sizePayload(65536, 8)), `{"size":65536,"gather":8}`},
		{string(waitItem(20 * time.Millisecond).payload), `{"sleep_ms":20}`},
		{string(stackItem(32<<10, 0).payload), `{"stack_kib":32}`},
		{string(stackItem(32<<10, 1600).payload), `{"stack_kib":32,"gather":1600}`},
	} {
		if tt.got != tt.want {
			t.Errorf("payload %s, want %s", tt.got, tt.want)
		}
	}
}

func TestPanicWorkloadRefused(t *testing.T) {
	cfg := defaultConfig()
	sc, err := newScenario(cfg, row{workload: "mix-panic", n: 2, count: 10})
	if err != nil {
		t.Fatal(err)
	}
	l := beginRun(t.Context(), cfg, &sc, runtimeSpec{Name: rtRef, Binary: "/nonexistent"}, 1, false)
	r := l.finish(t.Context())
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "exits on a panic") {
		t.Fatalf("problems %q, want the workload refused before anything starts", r.Problems)
	}
}

// TestSchedule: evenly spaced, or at random with a mean gap of 1/rate,
// the same for the same seed.
func TestSchedule(t *testing.T) {
	even := schedule(loadSpec{rate: 1000})
	for i := range 5 {
		if d := even(); d != time.Duration(i)*time.Millisecond {
			t.Fatalf("even %d at %v", i, d)
		}
	}
	a, b := schedule(loadSpec{rate: 1000, poisson: 7}), schedule(loadSpec{rate: 1000, poisson: 7})
	var last time.Duration
	short := 0
	const n = 20000
	for i := range n {
		d := a()
		if d != b() || d < last {
			t.Fatalf("arrival %d at %v: not the same for one seed, or before %v", i, d, last)
		}
		if d-last < 100*time.Microsecond && i > 0 {
			short++ // P(gap < mean/10) = 1 - e^-0.1 ≈ 9.5%
		}
		last = d
	}
	if mean := last / (n - 1); mean < 950*time.Microsecond || mean > 1050*time.Microsecond {
		t.Errorf("mean gap %v, want 1 ms", mean)
	}
	if share := float64(short) / n; share < 0.08 || share > 0.11 {
		t.Errorf("%.3f of the gaps under a tenth of the mean, want about 0.095: not exponential", share)
	}
}
