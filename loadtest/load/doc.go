// Package load drives invocations into a target and records what came
// back: the load test's load driver, as vegeta's attacker is to its
// commands.
//
//	st := load.Run(ctx, inv, load.Spec{Model: load.ModelOpen, Rate: 1000, Count: 10000,
//		Window: 12 * time.Second, Items: w.Items})
//	// st.OK, st.Throttles, st.Hist.ValueAtPercentile(99), ...
//
// # Contract
//
// A target is an Invoker: one call, one synchronous invocation, called
// concurrently. Run sends a closed load (Callers callers, each sending the
// moment it has an answer) or an open one (invocation i at start + i/Rate
// by the clock alone), RunWaves waves of n held at once, WarmUp items one
// after the other. Every load is bounded by Count and by Window and stops
// by itself; an invocation accepted before the window closed is waited for
// until ctx ends. Each returns once every invocation it sent has ended,
// with no goroutine left.
//
// A Workload is what a run sends: ParseWorkload reads the demo's
// workloads (tiny, size:S, wait:D, mix, grow, stack:S, event:NAME),
// ReadEvents and UserEvents a user's events, each Item with the check of
// its answer. An answer shaped like an HTTP door's response with a
// statusCode of 400 or more is wrong unless a check accepts it.
package load
