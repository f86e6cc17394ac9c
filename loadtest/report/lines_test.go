package report

import (
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
)

func TestThrottleLines(t *testing.T) {
	rep := &Report{Settings: bench.Settings{Options: target.Options{Target: target.RIE}, OnThrottle: bench.ThrottleNext}, Runtimes: []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}}}
	for _, c := range []struct {
		n       int
		lm, ref float64
	}{{1, 10, 40}, {8, 10.1, 40}} {
		rep.Scenarios = append(rep.Scenarios, ScenarioReport{
			Scenario: bench.Scenario{Workload: "tiny", N: c.n, PinCPU: -1},
			Medians:  map[string]map[string]float64{target.Lmigo: {bench.RejectedPct: c.lm}, target.AWSLambdaGo: {bench.RejectedPct: c.ref}},
		})
	}
	got := throttleLines(rep)
	if len(got) != 3 || !strings.Contains(got[0], "not retried") ||
		!strings.HasSuffix(got[1], "tiny N=1: lmigo 10.0% vs aws-lambda-go 40.0%, target ≤ ¼ (10.0%): met.") ||
		!strings.HasSuffix(got[2], ": NOT met.") {
		t.Errorf("lines:\n%s", strings.Join(got, "\n"))
	}
	rep.Settings.Target = target.Fake
	if got := throttleLines(rep); got != nil {
		t.Errorf("fake target: %q, want no verdict", got)
	}
	if load.RejectedPct(0, 0) != 0 || load.RejectedPct(3, 1) != 25 {
		t.Error("rejectedPct")
	}
}
