package main

import (
	"fmt"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// throttleTarget is the rejection bound: lmigo's rejection share at most a
// quarter of aws-lambda-go's in the same run.
const throttleTarget = 0.25

// throttleLines say, per scenario with both runtimes, whether lmigo's
// median rejection share is within throttleTarget of aws-lambda-go's, and
// how throttles were handled. Only against the emulator: the target is
// its, and the fake API throttles both runtimes alike (it answers the
// caller before it reads a queued poll).
func throttleLines(rep *report) []string {
	if rep.Config.Target != target.RIE {
		return nil
	}
	var lines []string
	for _, sr := range rep.Scenarios {
		ref, okR := sr.Medians[target.AWSLambdaGo][bench.RejectedPct]
		for _, rt := range rep.Runtimes {
			lm, okL := sr.Medians[rt.Name][bench.RejectedPct]
			if rt.Name == target.AWSLambdaGo || !okL || !okR {
				continue
			}
			verdict := "met"
			if lm > throttleTarget*ref {
				verdict = "NOT met"
			}
			lines = append(lines, fmt.Sprintf("Rejected %s: %s %s vs aws-lambda-go %s, target ≤ ¼ (%s): %s.",
				scenarioLabel(sr.Scenario), rt.Name, show.Pct(lm), show.Pct(ref), show.Pct(throttleTarget*ref), verdict))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	how := "each throttled invocation was retried (-on-throttle retry), so the share counts retries too"
	if rep.Config.OnThrottle == bench.ThrottleNext {
		how = "a throttled invocation was not retried: it counts as rejected and its caller sent the next one at once (-on-throttle next, the no-retry protocol)"
	}
	return append([]string{"rej % is throttled attempts per 100 attempts (Runtime.Unavailable / (answered + throttled)), medians; " + how + "."}, lines...)
}
