// Package bench runs scenarios on runtimes and measures them from
// outside: the bench of loadtest run and compare. A scenario is a
// workload at an N, in the closed, open or waves model (NewScenario,
// the sets of ParseScenarioName and SetRows); a run starts a runtime on
// its target, sends the warm-up and the measured load, and reads the
// runtime's CPU, memory, GCs, connections and the fake API's accounting
// into a RunResult, keyed by the metric constants.
//
//	scs := []bench.Scenario{sc}
//	res, err := bench.Execute(ctx, settings, scs, runtimes)
//	// res.Scenarios[0].Runs[0].Metrics[bench.P99], ...
//
// # Contract
//
// Execute runs every scenario for every runtime, interleaved, -reps
// times, each run in a fresh process, and returns every run; what went
// wrong in a run is a problem of its RunResult, never an error, and its
// error is for a scenario that could not run (its pinning) or a context
// ended. It pins itself to one CPU for the scenarios at N=1 and undoes
// it after. Every process it starts has ended when it returns; a run
// whose idle period may overlap the next runs is waited for. Progress
// goes to Settings.Stderr.
package bench
