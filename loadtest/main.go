// Command loadtest measures Lambda runtimes for Managed Instances: it
// drives bootstrap binaries (lmigo's and an aws-lambda-go reference on the
// same workload) through the fake LMI Runtime API, the AWS emulator or a
// deployed function, measures them from outside, and compares them.
//
//	go -C loadtest run . run [flags]       one runtime, one scenario (make run: the demo)
//	go -C loadtest run . compare [flags]   lmigo and aws-lambda-go side by side (make loadtest)
//	go -C loadtest run . build [flags]     cross-build the load test and the bootstraps for EC2
//	go -C loadtest run . soak [flags]      the soak (make soak)
//	go -C loadtest run . size -bootstrap PATH -events FILE [-vcpus V] [-json OUT]
//	                                       recommends N and memory for a function (size.go)
//
// Each command is a file of flags, wiring and output, with a config of its
// own, over the packages that do the work: load (the load driver), target
// (where a runtime runs), bench (scenarios and their runs), report (what
// they mean: medians, targets, tables, files), sizing, soak and measure.
//
// # How a run goes
//
// A run starts the runtime (exec'd against a fresh fake Runtime API in this
// process, in the emulator, or a deployed function), waits until it has N
// polls outstanding, sends a warm-up, then the measured load (closed or
// open model, or the waves of grow and stack:S), each bounded by a count
// and a send window; a throttled invocation is retried or, with
// -on-throttle next (the default against the emulator), counted as
// rejected. It reads, from outside: CPU (user+sys in /proc/PID/stat) over
// the measured window, VmHWM, VmRSS (for the waves also before the first
// wave and after an idle period), RSS every 100 ms, GCs from GODEBUG=gctrace=1 on stderr, and the
// fake API's connection and exactly-once accounting. Latency percentiles
// come from an HDR histogram.
//
// A comparison runs every scenario for its runtimes interleaved (A B A B
// ...; -runtimes adds lmigo-raw, -extra more), -reps times, each in a new
// process, and reports per metric the median of the repetitions and the
// ratio to aws-lambda-go; with perf installed, one more run of lmigo and
// of the floor in each open-model scenario is profiled for the share of
// runtime.startm and runtime.stopm in their CPU. Scenarios at N=1 run
// pinned to one CPU, the runtime and this process alike. LOADTEST_CPUPROFILE=file writes this
// process's CPU profile (the driver's and the fake API's).
//
// Every run stops by itself; all traffic stays on loopback except with
// -target lambda. Reports go to the terminal and, as JSON, Markdown and
// PNG, to -out (loadtest/out by default, git-ignored).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:]))
}

// run is main without os.Exit, so that its deferred calls run.
func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The fake API and the load driver share the CPU with the runtime
	// under test. Their garbage is small and short-lived: collecting it
	// less often leaves more CPU to the runtime (a few percent of this
	// process's CPU at N=64). LOADTEST_CPUPROFILE=file shows where theirs
	// goes.
	debug.SetGCPercent(400)
	if path := os.Getenv("LOADTEST_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	switch args[0] {
	case "run":
		err = runMain(ctx, args[1:])
	case "compare":
		err = compareMain(ctx, args[1:])
	case "build":
		err = buildMain(ctx, args[1:])
	case "soak":
		err = soakMain(ctx, args[1:])
	case "size":
		err = sizeMain(ctx, args[1:])
	case "-h", "--help", "help":
		usage()
		return 0
	default:
		usage()
		return 2
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		return 1
	}
	return 0
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: loadtest <command> [flags]
  run      one runtime under one load, then a report (default: the lmigo demo of make run)
  compare  lmigo and aws-lambda-go side by side, interleaved, medians and ratios (make loadtest)
  build    cross-build the load test and both bootstraps for linux/arm64 and linux/amd64
  size     your function's N and memory: -bootstrap PATH -events FILE [-vcpus V] [-json OUT]
Run "loadtest <command> -h" for its flags.`)
}
