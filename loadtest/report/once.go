package report

import (
	"fmt"
	"strings"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

// onceCheck is the exactly-once accounting of one run, from the fake
// Runtime API's counters and the driver's.
type onceCheck struct {
	handedOut, answered, lost, duplicated int64
	crossWired, noEcho, driverAnswered    int64
	maxOutstanding, n, violations         int64
	echo                                  bool // the runtime echoes the invocation ID (lmigo)
}

// exactlyOnce is r's accounting, or false when the target has no fake
// API to count on (rie, lambda).
func exactlyOnce(r bench.RunResult, n int) (onceCheck, bool) {
	st := r.API
	if st == nil {
		return onceCheck{}, false
	}
	answered := st.Responses + st.Errors
	return onceCheck{
		handedOut: st.Invocations, answered: answered, lost: max(st.Invocations-answered, 0),
		duplicated: st.Duplicates, crossWired: st.CrossWired, noEcho: st.NoEcho,
		driverAnswered: r.Load.Answered(),
		maxOutstanding: st.MaxOutstanding, n: int64(n), violations: st.Violations,
		echo: target.Echoes(r.Runtime),
	}, true
}

// holds says whether every invocation handed out was answered once, to
// the right caller, and the runtime never held more than N.
func (c onceCheck) holds() bool {
	return c.answered == c.handedOut && c.driverAnswered == c.answered && c.lost == 0 && c.duplicated == 0 &&
		c.crossWired == 0 && (!c.echo || c.noEcho == 0) && c.maxOutstanding <= c.n && c.violations == 0
}

// String is the check in one line: the verdict, then its figures.
func (c onceCheck) String() string {
	var b strings.Builder
	verdict, eq, le := "yes", "=", "≤"
	if !c.holds() {
		verdict = "NO"
	}
	if c.answered != c.handedOut {
		eq = "≠"
	}
	if c.maxOutstanding > c.n {
		le = ">"
	}
	fmt.Fprintf(&b, "%s: %d handed out %s %d answered once, %d lost, %d duplicated, %d cross-wired, ",
		verdict, c.handedOut, eq, c.answered, c.lost, c.duplicated, c.crossWired)
	if c.echo {
		fmt.Fprintf(&b, "%d without echo, ", c.noEcho)
	} else {
		b.WriteString("echo not expected, ")
	}
	fmt.Fprintf(&b, "max polls + in flight %d %s N=%d", c.maxOutstanding, le, c.n)
	if c.violations > 0 {
		fmt.Fprintf(&b, " (%d violations)", c.violations)
	}
	if c.driverAnswered != c.answered {
		fmt.Fprintf(&b, "; the callers counted %d answers", c.driverAnswered)
	}
	return b.String()
}

// onceLine is the exactly-once line of r for the reports.
func onceLine(r bench.RunResult, n int) string {
	if c, ok := exactlyOnce(r, n); ok {
		return c.String()
	}
	return fmt.Sprintf("not checked (only the fake Runtime API counts hand-outs); %d answered, %d accepted without an answer", r.Load.Answered(), r.Load.Failures)
}
