// Package target starts a runtime where the load test drives it: exec'd
// against the fake LMI Runtime API in this process (Fake), in the AWS
// emulator's LMI mode (RIE), or a deployed function (Lambda); and it
// builds, or takes from a zip, the bootstraps it runs.
//
//	in, err := target.Start(ctx, target.Options{Target: target.Fake, MemoryMB: 2048, Timeout: 30 * time.Second},
//		target.Runtime{Name: target.Lmigo, Binary: bin}, 8, -1)
//	defer in.Stop()
//	st := load.Run(ctx, in.Inv, spec)
//
// # Contract
//
// Start returns once the runtime has N polls outstanding (or the emulator
// is ready, or the function named); the Instance it returns invokes it
// (Inv), measures it from outside (CPU, Status, Procs) and ends it: Stop
// ends the runtime's whole process group, every process it started with
// it, and what served it, and waits for them. A bootstrap runs as the
// leader of a process group of its own, so that a wrapper script and its
// children are measured together; a process that leaves the group
// (setsid) leaves the load test's reach.
//
// WatchExit turns a function's exit during a load into the end of the
// load's context, and ExitProblem says how it ended with its last words.
// Output keeps a user's function's output in a file, bounded, and counts
// its WARN and ERROR lines. PinSelf pins this process to one CPU for
// figures at N=1 that do not depend on chance.
package target
