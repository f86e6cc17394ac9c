// Package soak runs the soak (make soak), in two phases of half its
// duration each. First the reference bootstrap under a long, bounded,
// mixed load against the fake Runtime API, with failures among the
// invocations (handler errors, panics, deadlines ignored, answers
// refused), checking at the end that every invocation was answered
// exactly once and that memory stayed flat. Then every handler form at
// once, under injected faults and with a token of its own in each
// invocation, ending in SIGTERM under load (forms.go).
//
//	go -C loadtest run . soak                  # make soak: N=64, 10 minutes
//	go -C loadtest run . soak -duration 20s    # what CI runs (TestSoakShort)
//
// # Contract
//
// Run builds the bootstraps it is not given, runs both phases and returns
// what they found in a Report; its error is for a soak that could not
// run. Every process it starts has ended when it returns. Print writes
// the Report, OK says whether it found nothing wrong.
package soak
