package load

import (
	"context"
	"errors"
	"slices"
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

func (s *scripted) Invoke(ctx context.Context, _ []byte) (Outcome, error) {
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
		return Outcome{}, errors.New("connection refused")
	}
	if s.throttle && n%2 == 1 {
		return Outcome{Throttled: true}, nil
	}
	if d := max(s.each, time.Until(until)); d > 0 {
		time.Sleep(d)
	}
	return Outcome{Body: []byte(`{"ok":true}`), Latency: time.Microsecond}, nil
}

func tinyItems() []Item { return []Item{tinyItem()} }

// TestOpenLoopIntendedTime: a stall of the target delays every
// invocation that comes during it, and the open model charges each of them
// the delay from its intended send time; the closed model, whose one
// caller waits out the stall, sees one slow invocation only (coordinated
// omission).
func TestOpenLoopIntendedTime(t *testing.T) {
	const stall = 60 * time.Millisecond
	open := Run(t.Context(), &scripted{stall: stall}, Spec{
		Model: ModelOpen, Rate: 1000, Count: 20, Window: 10 * time.Second, Items: tinyItems(),
	})
	if got := open.Answered(); got != 20 || open.OK != 20 {
		t.Fatalf("answered %d (ok %d), want 20", got, open.OK)
	}
	// Invocation k was intended at k ms, before the stall's end at ~60 ms.
	if min := time.Duration(open.Hist.Min()); min < stall-25*time.Millisecond {
		t.Errorf("open model: fastest latency %v, want >= %v: the delay of the stall is missing", min, stall-25*time.Millisecond)
	}

	closed := Run(t.Context(), &scripted{stall: stall}, Spec{
		Model: ModelClosed, Callers: 1, Count: 20, Window: 10 * time.Second, Items: tinyItems(),
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
	st := Run(t.Context(), inv, Spec{Model: ModelOpen, Rate: rate, Count: count, Window: 10 * time.Second, Items: tinyItems()})
	if st.Answered() != count {
		t.Fatalf("answered %d, want %d", st.Answered(), count)
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

func (h *heldAll) Invoke(ctx context.Context, _ []byte) (Outcome, error) {
	if h.started.Add(1) == h.want {
		close(h.all)
	}
	select {
	case <-h.all:
		return Outcome{Body: []byte(`{"ok":true}`)}, nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
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
	st := Run(ctx, inv, Spec{Model: ModelOpen, Rate: 2000, Count: count, Window: time.Minute, Items: tinyItems()})
	if st.OK != count || st.Failures != 0 || inv.started.Load() != count {
		t.Fatalf("ok %d, failures %d, sent %d; want all %d sent before any answer, and answered", st.OK, st.Failures, inv.started.Load(), count)
	}
}

func TestLoadBounds(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		inv    *scripted
		check  func(t *testing.T, st Stats, inv *scripted)
		within time.Duration
	}{
		{
			name: "count",
			spec: Spec{Model: ModelClosed, Callers: 3, Count: 100, Window: time.Minute},
			inv:  &scripted{},
			check: func(t *testing.T, st Stats, inv *scripted) {
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
			spec: Spec{Model: ModelClosed, Callers: 1, Count: 1_000_000, Window: 500 * time.Millisecond},
			inv:  &scripted{each: 10 * time.Millisecond},
			check: func(t *testing.T, st Stats, _ *scripted) {
				if st.OK < 2 || st.OK > 51 {
					t.Errorf("ok %d in a 500 ms window at 10 ms each", st.OK)
				}
			},
			within: 5 * time.Second,
		},
		{
			name: "open window",
			spec: Spec{Model: ModelOpen, Rate: 100, Count: 1_000_000, Window: 500 * time.Millisecond},
			inv:  &scripted{},
			check: func(t *testing.T, st Stats, _ *scripted) {
				if st.OK < 5 || st.OK > 52 {
					t.Errorf("ok %d in a 500 ms window at 100/s", st.OK)
				}
			},
			within: 5 * time.Second,
		},
		{
			name: "throttles retried and counted",
			spec: Spec{Model: ModelClosed, Callers: 2, Count: 40, Window: time.Minute, Pause: time.Millisecond},
			inv:  &scripted{throttle: true},
			check: func(t *testing.T, st Stats, inv *scripted) {
				if st.OK != 40 || st.Throttles+st.OK != inv.calls.Load() || st.Throttles < 20 {
					t.Errorf("ok %d, throttles %d, calls %d", st.OK, st.Throttles, inv.calls.Load())
				}
			},
			within: 5 * time.Second,
		},
		{
			// A pause of an hour would fail within: next never waits.
			name: "throttles rejected, next sent at once",
			spec: Spec{Model: ModelClosed, Callers: 2, Count: 40, Window: time.Minute, Pause: time.Hour, Next: true},
			inv:  &scripted{throttle: true},
			check: func(t *testing.T, st Stats, inv *scripted) {
				if inv.calls.Load() != 40 || st.OK != 20 || st.Throttles != 20 || st.Abandoned != 0 {
					t.Errorf("calls %d, ok %d, throttles %d, abandoned %d; want 40 attempts, 20 ok, 20 rejected, 0 abandoned",
						inv.calls.Load(), st.OK, st.Throttles, st.Abandoned)
				}
				if got := RejectedPct(st.Answered(), st.Throttles); got != 50 {
					t.Errorf("rejected %.1f%%, want 50%%", got)
				}
			},
			within: 5 * time.Second,
		},
		{
			name: "failures",
			spec: Spec{Model: ModelClosed, Callers: 2, Count: 10, Window: time.Minute},
			inv:  &scripted{fail: true},
			check: func(t *testing.T, st Stats, _ *scripted) {
				if st.Failures != 10 || st.Answered() != 0 || st.FirstErr == "" {
					t.Errorf("failures %d, answered %d, first %q", st.Failures, st.Answered(), st.FirstErr)
				}
			},
			within: 5 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Items = tinyItems()
			start := time.Now()
			st := Run(t.Context(), tt.inv, tt.spec)
			if d := time.Since(start); d > tt.within {
				t.Errorf("took %v, want under %v", d, tt.within)
			}
			tt.check(t, st, tt.inv)
		})
	}
}

func TestWavesLoad(t *testing.T) {
	for _, wl := range []string{"grow", "stack:32KiB"} {
		w, err := ParseWorkload(wl)
		if err != nil {
			t.Fatal(err)
		}
		inv := &scripted{}
		// scripted answers {"ok":true}, which the size checks reject and
		// the stack's accepts: every answer is counted, and counted once.
		wave := w.Waves(3)
		st := RunWaves(t.Context(), inv, wave, 3, 2, time.Minute, time.Millisecond)
		want := int64(3 * 2 * len(wave))
		if st.Answered() != want || inv.calls.Load() != want {
			t.Fatalf("%s: answered %d, calls %d; want %d", wl, st.Answered(), inv.calls.Load(), want)
		}
		if wl == "grow" && st.Wrong != want || wl != "grow" && st.OK != want {
			t.Errorf("%s: %d ok, %d wrong", wl, st.OK, st.Wrong)
		}
	}
}

// TestSchedule: evenly spaced, or at random with a mean gap of 1/rate,
// the same for the same seed.
func TestSchedule(t *testing.T) {
	even := schedule(Spec{Rate: 1000})
	for i := range 5 {
		if d := even(); d != time.Duration(i)*time.Millisecond {
			t.Fatalf("even %d at %v", i, d)
		}
	}
	a, b := schedule(Spec{Rate: 1000, Poisson: 7}), schedule(Spec{Rate: 1000, Poisson: 7})
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

// readyAfterThrottle throttles its first call and counts the waits for a
// poll that a retry asks of it.
type readyAfterThrottle struct {
	calls, waits atomic.Int64
}

func (r *readyAfterThrottle) Invoke(context.Context, []byte) (Outcome, error) {
	if r.calls.Add(1) == 1 {
		return Outcome{Throttled: true}, nil
	}
	return Outcome{Body: []byte(`{"ok":true}`)}, nil
}

func (r *readyAfterThrottle) WaitReady(context.Context) { r.waits.Add(1) }

// TestRetryWaitsForReady: without a pause, a throttled invocation is
// retried once the target says a poll is pending, where it can say so
// (the fake API's invoker, in another package).
func TestRetryWaitsForReady(t *testing.T) {
	inv := &readyAfterThrottle{}
	st := Run(t.Context(), inv, Spec{Model: ModelClosed, Callers: 1, Count: 1, Window: time.Minute, Items: tinyItems()})
	if st.OK != 1 || st.Throttles != 1 || inv.waits.Load() != 1 {
		t.Errorf("ok %d, throttles %d, waits for a poll %d; want 1, 1, 1", st.OK, st.Throttles, inv.waits.Load())
	}
}
