package bench

import (
	"testing"

	"github.com/lmigo/lmigo/loadtest/target"
)

// TestProfiled: the open model's runs of lmigo's runtimes and the floor
// are profiled, when -profile allows, and no other.
func TestProfiled(t *testing.T) {
	s := DefaultSettings()
	s.Profile = "auto"
	open, _ := NewScenario(s, Row{Workload: "tiny", N: 64, Rate: 1000})
	closed, _ := NewScenario(s, Row{Workload: "tiny", N: 64})
	stack, _ := NewScenario(s, Row{Workload: "stack:32KiB", N: 64})
	for _, tt := range []struct {
		sc   Scenario
		rt   string
		want bool
	}{
		{open, target.Lmigo, true}, {open, "lmigo-next", true}, {open, target.Floor, true}, {open, target.AWSLambdaGo, false},
		{closed, target.Lmigo, false}, {stack, target.Lmigo, false},
	} {
		if got := s.Profiled(tt.sc, target.Runtime{Name: tt.rt}); got != tt.want {
			t.Errorf("profiled(%s, %s) = %v", tt.sc.Name, tt.rt, got)
		}
	}
	s.Profile = "off"
	if s.Profiled(open, target.Runtime{Name: target.Lmigo}) {
		t.Error("profiled with -profile off")
	}
}
