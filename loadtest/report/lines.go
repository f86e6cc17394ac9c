package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// targetLines are the targets of every scenario, one line each.
func targetLines(rep *Report) []string {
	var lines []string
	for _, sr := range rep.Scenarios {
		for _, t := range sr.Targets {
			verdict := "holds"
			if !t.Holds {
				verdict = "DOES NOT HOLD"
			}
			lines = append(lines, fmt.Sprintf("memory target, %s, %s: %s: %.1f MiB (limit %.1f MiB): %s",
				scenarioLabel(sr.Scenario), t.Runtime, t.What, t.Value, t.Limit, verdict))
		}
	}
	return lines
}

// summaryLines are the lines under the table: the memory targets, the
// targets against the floor, the notes and the rejection verdicts.
func summaryLines(rep *Report) []string {
	return slices.Concat(targetLines(rep), floorTargetLines(rep), rep.Notes, throttleLines(rep))
}

// floorTargetLines are the floor targets, one line each: "met" or "NOT met"
// with the figures.
func floorTargetLines(rep *Report) []string {
	var lines []string
	for _, t := range rep.FloorTargets {
		verdict := "met"
		if !t.Met {
			verdict = "NOT met"
		}
		format := t.format
		if format == nil { // read back from JSON
			format = func(v float64) string { return fmt.Sprintf("%.4g", v) }
		}
		fig := func(v float64) string {
			if math.IsNaN(v) {
				return "no figures"
			}
			return format(v)
		}
		rel := ""
		if r, ok := ratio(t.Value, t.Base); ok && !math.IsNaN(r) {
			rel = ", " + show.Ratio(r)
		}
		lines = append(lines, fmt.Sprintf("floor target, %s, %s: %s: %s (%s %s%s; limit %s): %s",
			t.Scenario, t.Runtime, t.What, fig(t.Value), t.base, fig(t.Base), rel, fig(t.Limit), verdict))
	}
	return lines
}

// throttleTarget is the rejection bound: lmigo's rejection share at most a
// quarter of aws-lambda-go's in the same run.
const throttleTarget = 0.25

// throttleLines say, per scenario with both runtimes, whether lmigo's
// median rejection share is within throttleTarget of aws-lambda-go's, and
// how throttles were handled. Only against the emulator: the target is
// its, and the fake API throttles both runtimes alike (it answers the
// caller before it reads a queued poll).
func throttleLines(rep *Report) []string {
	if rep.Settings.Target != target.RIE {
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
	if rep.Settings.OnThrottle == bench.ThrottleNext {
		how = "a throttled invocation was not retried: it counts as rejected and its caller sent the next one at once (-on-throttle next, the no-retry protocol)"
	}
	return append([]string{"rej % is throttled attempts per 100 attempts (Runtime.Unavailable / (answered + throttled)), medians; " + how + "."}, lines...)
}
