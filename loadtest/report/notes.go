package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
)

// notes say how the figures were taken, for every report.
func notes(s bench.Settings, scs []bench.Scenario, rts []target.Runtime) []string {
	var ns []string
	for _, rt := range rts {
		var skipped []string
		for _, sc := range scs {
			if !rt.Serves(sc.Work) {
				skipped = append(skipped, sc.Name)
			}
		}
		if len(skipped) > 0 {
			ns = append(ns, fmt.Sprintf("%s serves tiny, size:S and wait:D only: not run for %s.", rt.Name, strings.Join(skipped, ", ")))
		}
	}
	var pinned []string
	for _, sc := range scs {
		if sc.PinCPU >= 0 {
			pinned = append(pinned, sc.Name)
		}
	}
	if len(pinned) > 0 {
		ns = append(ns, fmt.Sprintf("Pinned to CPU %d, the runtime (taskset -c %d) and the load test (all threads, GOMAXPROCS=1) alike: %s. Unpinned N=1 figures are bimodal on small machines (cross-CPU wake-ups).",
			s.CPU, s.CPU, strings.Join(pinned, ", ")))
	}
	for _, sc := range scs {
		if sc.Workload == "grow" {
			ns = append(ns, fmt.Sprintf("grow: first one invocation of each size (the warm-up: the demo's body cache, about 13 MiB, fills in every runtime), then %s idle (-settle), then RSS before is read; then waves of N invocations held at once (the demo's gather), one wave per size 64KiB, 256KiB, 1MiB, 2MiB, 4MiB, 6MiB, %d round(s); RSS after is read %s after the load; after-before is per run, then the median. Up to %d runs idle at once while the next ones run (-idle-overlap).",
				time.Duration(sc.Settle), sc.Rounds, time.Duration(sc.Idle), s.IdleOverlap))
			break
		}
	}
	for _, sc := range scs {
		if s, ok := strings.CutPrefix(sc.Workload, "stack:"); ok {
			ns = append(ns, fmt.Sprintf("stack:%s: one invocation (the warm-up), %s idle (-settle), then RSS before is read; then waves of N invocations, each growing its goroutine's stack to %s and all held at once (the demo's gather), %d round(s); RSS after is read %s after the load; after-before is per run, then the median.",
				s, time.Duration(sc.Settle), s, sc.Rounds, time.Duration(sc.Idle)))
			break
		}
	}
	ns = append(ns, belowSatNotes(s, scs, rts)...)
	switch s.Target {
	case target.Fake:
		ns = append(ns, "Target: each runtime exec'd against the fake LMI Runtime API, which runs inside the load test: its CPU is not the runtime's. CPU per invocation is the runtime's user+sys time (/proc/PID/stat) over the measured window divided by the invocations answered in it; drv CPU is the load test's own (the fake API and the callers), per invocation the same way: on a machine of few CPUs both bound inv/s.")
	case target.RIE:
		ns = append(ns, "Target: the AWS Runtime Interface Emulator in LMI mode; CPU and memory are the runtime's process (uid 993 in the emulator's PID namespace), the emulator excluded.")
	case target.Lambda:
		ns = append(ns, "Target: deployed functions through the Lambda Invoke API; only what a caller sees is measured (latency includes the network and Lambda's front end).")
	}
	ns = append(ns,
		fmt.Sprintf("Each value is the median of %d repetitions; runs of the runtimes interleaved (A B A B ..., or A B C A B C ...), each in a new process. Ratio is lmigo / aws-lambda-go (and lmigo-raw / aws-lambda-go): below 1 is less (faster, smaller) for lmigo, except inv/s where above 1 is better. \"X vs floor\" is X / floor, the least work that answers the same contract (loadtest/floorbootstrap: one connection per slot, HTTP/1.1 by hand, cached answers): 1 is no cost above it.", s.Reps),
		"Latency: closed model, the target's own measure (fake API: from hand-out on /next until the response is read in full); open model, from the intended send time. Percentiles from an HDR histogram (3 significant digits).",
		"Peak RSS is VmHWM; RSS before is VmRSS before the first wave (grow, stack:S); RSS after is VmRSS after the idle period (grow, stack:S) or at the end of the load; GC/1k counts gctrace lines (GODEBUG=gctrace=1) per 1000 invocations; conns/1k is TCP connections the runtime opened per 1000 invocations (fake API); ready is exec to N polls outstanding (rie: emulator start to init done), ready CPU the runtime's CPU time by then (fake); thr/1k is throttled attempts (Runtime.Unavailable) per 1000 invocations, rej % per 100 attempts: "+throttleHandling(s)+".",
	)
	return ns
}

// throttleHandling says what a caller did with a throttled invocation
// (-on-throttle, -throttle-pause; retryWait).
func throttleHandling(s bench.Settings) string {
	switch {
	case s.OnThrottle == bench.ThrottleNext:
		return "a throttled invocation is not retried: it counts as rejected and its caller sends the next one at once (-on-throttle next; grow retries it, as its wave waits for it)"
	case s.Pause > 0:
		return fmt.Sprintf("a throttled invocation is retried after %s (-throttle-pause)", s.Pause)
	case s.Target == target.Fake:
		return "a throttled invocation is retried as soon as the fake API has a /next pending again"
	}
	return "a throttled invocation is retried after 1 ms"
}

// belowSatNotes say how the below-saturation scenarios of scs were run
// and checked, and how the scheduler's share was read.
func belowSatNotes(s bench.Settings, scs []bench.Scenario, rts []target.Runtime) []string {
	var open, profiled bool
	for _, sc := range scs {
		if sc.Model == load.ModelOpen {
			open = true
			for _, rt := range rts {
				profiled = profiled || s.Profiled(sc, rt)
			}
		}
	}
	if !open {
		return nil
	}
	ns := []string{"Open model (WORKLOAD-nN-rR, \"at R/s\"): invocation i is sent at start + i/R by the clock alone, each from a goroutine of its own, so no send waits for an answer; its latency runs from that time. wait:D is an I/O-bound handler: it waits D (the demo's sleep_ms; the floor's time.Sleep in its slot's goroutine), then answers as tiny. Targets below saturation, lmigo's against the floor of the same run: CPU/inv <= 1.1x (tiny, wait:D), peak RSS <= floor + 16 MiB + 4 KiB x N and p99 <= floor + 1 ms (wait:D); stack:S: RSS after - RSS before <= 8 MiB."}
	switch perf := measure.PerfAvailable(); {
	case profiled:
		ns = append(ns, fmt.Sprintf("startm+stopm: the share of the runtime's CPU samples whose stack holds runtime.startm or runtime.stopm (the scheduler waking an idle P to look for work, and putting it back to sleep), kernel frames below them included: perf record -e cpu-clock -F %d -g on the runtime's process during the measured load, in one more run of each of lmigo's runtimes and the floor after the measured ones; that run's other figures are not in the medians.", measure.PerfHz))
	case perf != nil && s.Flags["profile"] == "auto" && s.Target != target.Lambda:
		ns = append(ns, "startm+stopm: not measured: "+perf.Error()+".")
	}
	return append(ns, latencyNote(scs)...)
}

// latencyNote says what the latency rows measure and their targets.
func latencyNote(scs []bench.Scenario) []string {
	if !slices.ContainsFunc(scs, latencyRowsOf) {
		return nil
	}
	return []string{strings.Join([]string{
		"Latency rows (tiny, open model): from each invocation's intended send time to its answer read in full by the caller (fake API: the caller's goroutine woken with the runtime's post read), so a late send, a slow hand-out or a slow answer all count.",
		"Targets, lmigo's against the floor of the same run: p50 <= 1.1x, p99 <= 1.3x the floor's median.",
	}, " ")}
}

// RunNotes explain the figures of a run's report, and only those: the
// target, the latency, the memory and its plot, the throttles.
func RunNotes(rep *Report) []string {
	s, sc := rep.Settings, rep.Scenarios[0].Scenario
	var ns []string
	switch s.Target {
	case target.Fake:
		ns = append(ns, "The runtime runs against the fake LMI Runtime API, inside the load test. Runtime CPU per invocation is the runtime process's user+sys time (/proc/PID/stat) over the measured window, divided by the invocations answered in it; the load test's own CPU is not in it, though it shares the machine.")
	case target.RIE:
		ns = append(ns, "The runtime runs in the AWS emulator's LMI mode; CPU per invocation and memory are the runtime's process, the emulator excluded.")
	case target.Lambda:
		ns = append(ns, "The runtime is a deployed function: only what a caller sees is measured; CPU per invocation, memory, GCs and connections are the platform's (-).")
	}
	if sc.Model == load.ModelOpen {
		ns = append(ns, "Latency runs from each invocation's intended send time, so a stall of the runtime counts in every invocation it delayed; percentiles from an HDR histogram.")
	} else {
		ns = append(ns, "Latency is the target's own measure (fake API: from hand-out on /next until the answer is read in full); percentiles from an HDR histogram.")
	}
	if s.Reps > 1 {
		ns = append(ns, fmt.Sprintf("Each figure is the median of %d runs.", s.Reps))
	}
	ns = append(ns,
		"Peak RSS is the runtime process's VmHWM; RSS after its VmRSS at the end of the load (grow: after the idle period). GCs count its gctrace lines (GODEBUG=gctrace=1); TCP connections are those it opened to the Runtime API.",
		"Throttled attempts are invokes that found no /next pending (Runtime.Unavailable): "+throttleHandling(s)+".")
	if s.Target != target.Lambda {
		ns = append(ns, rssCaption(rep.Scenarios[0].Medians[rep.Runtimes[0].Name]))
	}
	return ns
}

// rssCaption says what the RSS plot of a run with figures m shows and how
// to read its rise: before the first GC, garbage, not a leak.
func rssCaption(m map[string]float64) string {
	const what = "The RSS plot (run-rss-*.png) is the runtime process's resident memory (VmRSS) every 100 ms from exec to the end of the load. "
	if gcs, ok := m[bench.GCs]; ok && gcs == 0 {
		return what + "No garbage collection ran in the measured window, so RSS rises with the invocations' garbage until the first one: that rise is not a leak (make soak holds memory flat for 10 minutes)."
	}
	return what + "It rises while the slots serve their first invocations and their buffers fill, and falls back at garbage collections; a line that rises across many collections would be a leak."
}
