package report

import (
	"fmt"
	"io"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

// printAccounting lists what was sent and how it ended, and every problem.
func printAccounting(w io.Writer, rep *Report) {
	var total, fe, thr, abandoned int64
	var viol, crossed, noEcho int64
	once := true
	for _, sr := range rep.Scenarios {
		for _, r := range sr.Runs {
			if c, ok := exactlyOnce(r, sr.Scenario.N); ok && !c.holds() {
				once = false
			}
			total += r.Load.Answered()
			fe += r.Load.FuncErrors
			thr += r.Load.Throttles
			abandoned += r.Load.Abandoned
			if r.API != nil {
				viol += r.API.Violations
				crossed += r.API.CrossWired
				if target.Echoes(r.Runtime) {
					noEcho += r.API.NoEcho
				}
			}
		}
	}
	handled := "retried"
	if rep.Settings.OnThrottle == bench.ThrottleNext {
		handled = "rejected, not retried"
	}
	fmt.Fprintf(w, "- Accounting: %d invocations answered (warm-up included), %d function errors as asked, %d throttled attempts %s, %d given up when the window closed",
		total, fe, thr, handled, abandoned)
	if rep.Settings.Target == target.Fake {
		verdict := "every invocation answered exactly once"
		if !once {
			verdict = "NOT every invocation answered exactly once (see PROBLEM)"
		}
		fmt.Fprintf(w, "; %s, %d protocol violations, %d cross-wired answers, %d answers of lmigo without the invocation ID echo", verdict, viol, crossed, noEcho)
	}
	fmt.Fprintln(w, ".")
	for _, sr := range rep.Scenarios {
		for _, r := range sr.Runs {
			for _, p := range r.Problems {
				fmt.Fprintf(w, "PROBLEM %s %s rep %d: %s\n", r.Scenario, r.Runtime, r.Rep, p)
			}
			for _, p := range r.Warnings {
				fmt.Fprintf(w, "WARNING %s %s rep %d: %s\n", r.Scenario, r.Runtime, r.Rep, p)
			}
		}
	}
}
