package main

import (
	"fmt"

	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// What a caller does with a throttled invocation (-on-throttle).
const (
	// throttleRetry sends the same invocation again after -throttle-pause.
	throttleRetry = "retry"
	// throttleNext counts it as rejected and sends the next invocation at
	// once: the no-retry protocol ("closed-loop callers that send their next
	// invocation the moment they get a response, no retry"), under which
	// the emulator's rejection share is the target.
	throttleNext = "next"
)

// defaultOnThrottle is next for the emulator, whose rejection share is
// the rejection target and which a retry after a pause would understate (the
// pause gives the runtime time to poll again, and takes the caller out of
// the race that share measures); retry elsewhere: the fake API answers its
// caller before it reads a queued poll, so its figures measure the runtime
// only when a throttled invocation waits for the next poll, and Lambda's
// 429 is retried by real callers.
func defaultOnThrottle(where string) string {
	if where == target.RIE {
		return throttleNext
	}
	return throttleRetry
}

// mRejected is the metric key of the rejection share: throttled attempts
// per 100 attempts (answered plus throttled) in the measured window.
const mRejected = "rejected_pct"

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
		ref, okR := sr.Medians[target.AWSLambdaGo][mRejected]
		for _, rt := range rep.Runtimes {
			lm, okL := sr.Medians[rt.Name][mRejected]
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
	if rep.Config.OnThrottle == throttleNext {
		how = "a throttled invocation was not retried: it counts as rejected and its caller sent the next one at once (-on-throttle next, the no-retry protocol)"
	}
	return append([]string{"rej % is throttled attempts per 100 attempts (Runtime.Unavailable / (answered + throttled)), medians; " + how + "."}, lines...)
}
