package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
)

// scenarioLabel is a scenario as the tables show it.
func scenarioLabel(sc bench.Scenario) string {
	s := fmt.Sprintf("%s N=%d", sc.Workload, sc.N)
	if sc.Model == load.ModelOpen {
		s += " at " + strconv.FormatFloat(sc.Rate, 'f', -1, 64) + "/s"
	}
	if sc.PinCPU >= 0 {
		s += " pinned"
	}
	return s
}

// belowSat says whether sc is a scenario of the below-saturation table:
// the open model, and the grown stacks of stack:S.
func belowSat(sc bench.Scenario) bool {
	return sc.Model == load.ModelOpen || strings.HasPrefix(sc.Workload, "stack:")
}

// latencyRowsOf says whether sc has latency rows: tiny, the open model.
func latencyRowsOf(sc bench.Scenario) bool {
	return sc.Model == load.ModelOpen && sc.Workload == "tiny"
}

// latencyTarget says whether a floor target's what is a latency row's.
func latencyTarget(what string) bool {
	return what == whatP50 || what == whatP99
}
