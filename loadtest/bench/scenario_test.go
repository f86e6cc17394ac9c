package bench

import (
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
)

func TestScenarioNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		want Row
		bad  bool
	}{
		{name: "size-1MiB-n1", want: Row{Workload: "size:1MiB", N: 1, Count: 1024}}, // the standard set's
		{name: "tiny-n64-r1000", want: Row{Workload: "tiny", N: 64, Rate: 1000, Count: 10000}},
		{name: "wait-100ms-n1600-r1500", want: Row{Workload: "wait:100ms", N: 1600, Rate: 1500, Count: 15000}},
		{name: "stack-32KiB-n1600", want: Row{Workload: "stack:32KiB", N: 1600}},
		{name: "grow-n64", want: Row{Workload: "grow", N: 64}},
		{name: "size-256KiB-n1", want: Row{Workload: "size:256KiB", N: 1, Count: 4096}},
		{name: "size-6MiB-n4", want: Row{Workload: "size:6MiB", N: 4, Count: 170}},
		{name: "size-1KiB-n2", want: Row{Workload: "size:1KiB", N: 2, Count: 10000}},
		{name: "grow-n32", want: Row{Workload: "grow", N: 32}},
		{name: "tiny-n8-r2000", want: Row{Workload: "tiny", N: 8, Rate: 2000, Count: 20000}},
		{name: "wait-5ms-n4-r250.5", want: Row{Workload: "wait:5ms", N: 4, Rate: 250.5, Count: 2505}},
		{name: "mix-panic-n8", want: Row{Workload: "mix-panic", N: 8}},
		{name: "grow", bad: true},
		{name: "grow-n0", bad: true},
		{name: "tiny-n8-r0", bad: true},
		{name: "tiny-n8-r", bad: true},
		{name: "size-9MiB-n1", bad: true},
		{name: "wait-1us-n1-r10", bad: true},
		{name: "nope-n1", bad: true},
	} {
		got, err := ParseScenarioName(tt.name)
		if tt.bad != (err != nil) || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
		if err == nil && got.Name() != tt.name {
			t.Errorf("%s: name written back %q", tt.name, got.Name())
		}
	}
	for _, set := range []string{SetStandard, SetSaturation, SetBelowSat} {
		for _, name := range SetNames(set) {
			if r, err := ParseScenarioName(name); err != nil || r.Name() != name {
				t.Errorf("set %s: %s reads back as %+v, %v", set, name, r, err)
			}
		}
	}
	if _, err := SetRows("fast"); err == nil {
		t.Error("-set fast accepted")
	}
}

// TestOpenScenarioWindow: an open row's window is its schedule, count/rate,
// and a grace for retries, unless -duration is given; a closed row's is
// -duration.
func TestOpenScenarioWindow(t *testing.T) {
	s := DefaultSettings()
	open, err := NewScenario(s, Row{Workload: "wait:20ms", N: 64, Rate: 1000, Count: 10000})
	if err != nil || open.Model != load.ModelOpen || open.Rate != 1000 || time.Duration(open.Window) != 10*time.Second+load.OpenGrace || open.Name != "wait-20ms-n64-r1000" {
		t.Errorf("open row: %+v, %v", open, err)
	}
	closed, err := NewScenario(s, Row{Workload: "tiny", N: 64, Count: 10000})
	if err != nil || closed.Model != load.ModelClosed || closed.Rate != 0 || time.Duration(closed.Window) != s.Duration || closed.Callers != 64 {
		t.Errorf("closed row: %+v, %v", closed, err)
	}
	stack, err := NewScenario(s, Row{Workload: "stack:32KiB", N: 16})
	if err != nil || stack.Model != load.ModelWaves || stack.Count != s.Rounds*16 || stack.Warmup != 1 || stack.Idle == 0 {
		t.Errorf("stack row: %+v, %v", stack, err)
	}
	s.DurationSet = true
	s.Duration = time.Second
	if sc, _ := NewScenario(s, Row{Workload: "tiny", N: 64, Rate: 1000, Count: 10000}); time.Duration(sc.Window) != time.Second {
		t.Errorf("open row with -duration 1s: window %v", time.Duration(sc.Window))
	}
	s.Model, s.Rate = load.ModelOpen, 500
	if sc, _ := NewScenario(s, Row{Workload: "tiny", N: 8, Count: 100}); sc.Model != load.ModelOpen || sc.Rate != 500 || sc.Name != "tiny-n8-r500" {
		t.Errorf("-model open -rate 500 on a closed row: %+v", sc)
	}
}
