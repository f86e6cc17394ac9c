package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// PrintRun writes the report of a single runtime: what ran, the figures
// at a glance (the rates offered and answered, latency, CPU, memory, the
// exactly-once accounting), then the details, one line per figure.
func PrintRun(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "\n%s\n", runTitle(rep))
	glance, details := runLines(rep)
	lines := indent(glance)
	lines = append(lines, []string{"details:"})
	lines = append(lines, indent(details)...)
	show.Aligned(w, lines)
	printAccounting(w, rep)
}

// runTitle says what ran: runtime, workload, N, load model and bounds.
func runTitle(rep *Report) string {
	sc := rep.Scenarios[0].Scenario
	offered := fmt.Sprintf("%d closed-loop callers", sc.Callers)
	switch sc.Model {
	case load.ModelOpen:
		offered = fmt.Sprintf("open loop at %.0f/s", sc.Rate)
	case load.ModelWaves:
		offered = fmt.Sprintf("waves of %d, %d rounds, then %s idle", sc.N, sc.Rounds, time.Duration(sc.Idle))
	}
	what := sc.Workload
	if sc.Events != "" {
		what = sc.Events
	}
	return fmt.Sprintf("%s: %s at N=%d, %s, target %s, at most %d invocations or %s",
		rep.Runtimes[0].Name, what, sc.N, offered, rep.Settings.Target, sc.Count, time.Duration(sc.Window))
}

func indent(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append([]string{"  " + r[0]}, r[1:]...)
	}
	return out
}

// cpuReading says why a run's CPU per invocation is not the README's
// figure, which is tiny invocations at N=64 with the runtime saturated
// (a closed loop: each caller re-sends the moment it is answered).
func cpuReading(sc bench.Scenario) string {
	var why []string
	if sc.Model == load.ModelOpen {
		why = append(why, "below saturation, where each invocation wakes an idle runtime")
	}
	if sc.Workload == load.EventsWorkload {
		why = append(why, "the user's events")
	} else if sc.Workload != "tiny" {
		why = append(why, fmt.Sprintf("%s (%s), more work than tiny invocations", sc.Workload, workloadWords(sc.Workload)))
	}
	if sc.N != 64 {
		why = append(why, fmt.Sprintf("N=%d", sc.N))
	}
	const readme = "the README's CPU figure is tiny invocations at N=64, the runtime saturated (make loadtest)"
	if len(why) == 0 {
		return "as " + readme
	}
	return "this run: " + strings.Join(why, "; ") + "; " + readme
}

// workloadWords says what a workload sends, in a few words.
func workloadWords(name string) string {
	const mix = "answers up to 64 KiB, a sleep, CPU work, an error"
	switch {
	case name == "tiny":
		return "an empty event, a small answer"
	case name == "mix":
		return mix
	case name == "mix-panic":
		return mix + ", a panic"
	case name == "grow":
		return "waves of answers up to 6 MiB"
	case strings.HasPrefix(name, "size:"):
		return "answers of " + strings.TrimPrefix(name, "size:")
	case strings.HasPrefix(name, load.EventPrefix):
		return "a realistic event, typed"
	case name == load.EventsWorkload:
		return "the user's events"
	}
	return name
}

// overloadBusy is the share of N busy on average above which a throttle
// is read as overload: below it, the slots were mostly free and only a
// burst found them all busy.
const overloadBusy = 0.8

// throttleMeaning says what the throttles of a run of sc mean, so that a
// reader takes neither the closed loop's race nor a burst for overload:
// measured and warm are those of the measured window and of the warm-up,
// m the run's figures, tgt the target it ran on.
func throttleMeaning(sc bench.Scenario, measured, warm int64, m map[string]float64, tgt string) string {
	switch {
	case sc.Model == load.ModelOpen && measured+warm == 0:
		return fmt.Sprintf("at %.0f/s every invoke found a slot polling; a throttle here would mean overload", sc.Rate)
	case sc.Model == load.ModelOpen:
		// Little's law: the slots busy on average are the rate times the
		// latency. Far below N, the slots were free but for moments.
		busy := sc.Rate * m[bench.P50] / 1e6
		cpu := ""
		if c, ok := m[bench.CPUPerInv]; ok && m[bench.Throughput] > 0 {
			cpu = fmt.Sprintf(", the runtime using %.0f%% of a CPU", c*m[bench.Throughput]/1e4)
		}
		inFlight := fmt.Sprintf("rate × p50 latency ≈ %.1f invocations in flight for N=%d slots%s", busy, sc.N, cpu)
		switch {
		case measured == 0:
			return "all in the warm-up" + coldStart(m, tgt) + "; a burst, not overload (" + inFlight + ")"
		case busy < overloadBusy*float64(sc.N):
			return "a burst, not overload: " + inFlight + "; invocations that arrived together (a cold start's first, or after a stall of this machine) found the other slots busy for a moment"
		}
		return fmt.Sprintf("overload: %s; at %.0f/s the runtime fell behind (more offered than N serve, or a machine too busy to run it)", inFlight, sc.Rate)
	case sc.Model == load.ModelWaves:
		return "waves of N are sent at once, before every slot has polled again: that race, not overload"
	case sc.Callers > sc.N:
		return fmt.Sprintf("%d closed-loop callers for N=%d slots: more offered than N serve", sc.Callers, sc.N)
	}
	return "closed loop: each caller re-sends the instant it is answered, before the runtime's next /next is registered; not overload (-model open measures that)"
}

// coldStart says why a cold start's first invocations were throttled:
// the load begins once the function is ready (target.Start), so the
// slots' start-up is the cause only where readiness was not measured.
func coldStart(m map[string]float64, tgt string) string {
	ready, ok := m[bench.Ready]
	slow := "the first invocations of a cold start ran longer than later ones (cold caches, first connections), and more than N arrived while they ran"
	switch {
	case ok && tgt == target.Fake:
		return fmt.Sprintf(", and the load began only once every slot had polled (exec to N polls outstanding: %s), so not the slots' start-up: %s", show.MS(ready), slow)
	case ok && tgt == target.RIE:
		return fmt.Sprintf(", and the load began only once the emulator had run the function's init (%s from its start), so hardly the slots' start-up: %s", show.MS(ready), slow)
	}
	return ": " + slow + ", or arrived before every slot had polled"
}

// runLines are the lines of the report of a single runtime (kind run):
// the figures at a glance, then the details. Terminal and Markdown show
// the same lines.
func runLines(rep *Report) (glance, details [][]string) {
	sr := rep.Scenarios[0]
	sc := sr.Scenario
	m := runFigures(sr, rep.Runtimes[0].Name)
	get := func(key string, f func(float64) string) string { return cell(m, key, f) }
	add := func(to *[][]string, k, v string) { *to = append(*to, []string{k, v}) }

	lat := strings.Join([]string{
		get(bench.P50, show.Latency), get(bench.P90, show.Latency), get(bench.P99, show.Latency), get(bench.P999, show.Latency), get(bench.MaxLatency, show.Latency)}, " / ")
	// What was offered and what was answered are two figures: below
	// capacity they agree, above it they part.
	switch sc.Model {
	case load.ModelOpen:
		add(&glance, "offered rate", fmt.Sprintf("%.0f invocations/s, open loop: each sent at its due time, never waiting for an answer", sc.Rate))
		lat += " (from the intended send time)"
	case "waves":
		add(&glance, "offered load", fmt.Sprintf("waves of %d invocations at once", sc.N))
	default:
		add(&glance, "offered load", fmt.Sprintf("%d callers, each sending its next invocation the moment it has an answer (closed loop)", sc.Callers))
	}
	add(&glance, "answered rate", get(bench.Throughput, show.Count)+" invocations/s in the measured window")
	add(&glance, "latency p50 / p90 / p99 / p99.9 / max", lat)
	cpu := get(bench.CPUPerInv, show.Latency)
	if c, ok := m[bench.CPUPerInv]; ok && m[bench.Throughput] > 0 {
		cpu += fmt.Sprintf(" (%.0f%% of a CPU at %s/s)", c*m[bench.Throughput]/1e4, show.Count(m[bench.Throughput]))
	}
	add(&glance, "runtime CPU per invocation", cpu)
	add(&glance, "  read as", cpuReading(sc))
	add(&glance, "runtime peak RSS / RSS after", get(bench.PeakRSS, show.MiB)+" / "+get(bench.RSSAfter, show.MiB))

	handled := "retried"
	if rep.Settings.OnThrottle == bench.ThrottleNext {
		handled = "not retried"
	}
	for _, r := range sr.Runs {
		l := r.Load
		add(&glance, "exactly once", onceLine(r, sc.N))
		// The share is the measured window's; the count is too, and the
		// warm-up's are said apart.
		measured := int64(math.Round(m[bench.ThrottlesPer1k] * m[bench.Invocations] / 1000))
		thr := fmt.Sprintf("%d (%s of attempts)", measured, get(bench.RejectedPct, show.Pct))
		if warm := l.Throttles - measured; warm > 0 {
			thr = fmt.Sprintf("%d in the measured window (%s of its attempts), %d more in the warm-up (%d in all)",
				measured, get(bench.RejectedPct, show.Pct), warm, l.Throttles)
		}
		meaning := throttleMeaning(sc, measured, l.Throttles-measured, m, rep.Settings.Target)
		if r.Exited != "" {
			meaning = "the function exited (PROBLEM below): no slot of it polled after that"
		}
		add(&details, "throttled attempts, "+handled, thr+": "+meaning)
		add(&details, "invocations answered", fmt.Sprintf("%d (%d ok, %d function errors as asked, %d wrong), %d measured after %d warm-up",
			l.Answered(), l.OK, l.FuncErrors, l.Wrong, int64(m[bench.Invocations]), sc.Warmup))
		if r.CPUs != "" {
			add(&details, "runtime's CPUs", r.CPUs)
		}
		if r.Output != nil {
			add(&details, "the function's output", r.Output.Words())
		}
	}
	add(&details, "exec to N polls outstanding", get(bench.Ready, show.MS))
	add(&details, "GCs in the measured window", get(bench.GCs, show.Count)+" ("+get(bench.GCsPer1k, show.One)+" per 1000)")
	add(&details, "TCP connections: at init / per 1000 after", get(bench.ConnsInit, show.Count)+" / "+get(bench.ConnsPer1k, show.One))
	return glance, details
}

// runFigures are the figures a run report shows: the medians, or, where
// its one run had problems but the function kept serving (wrong answers:
// HTTP errors without -expect), that run's own: they were measured, and
// the verdict says why they prove nothing.
func runFigures(sr ScenarioReport, rt string) map[string]float64 {
	if m := sr.Medians[rt]; len(m) > 0 || len(sr.Runs) != 1 || sr.Runs[0].Exited != "" {
		return m
	}
	return sr.Runs[0].Metrics
}

// RunVerdict is the last line of a run: what it proves and what it does not.
func RunVerdict(rep *Report) string {
	sr := rep.Scenarios[0]
	sc := sr.Scenario
	rt := rep.Runtimes[0].Name
	m := sr.Medians[rt]
	if n := rep.Problems(); n > 0 || len(sr.Runs) == 0 {
		why := "the run had problems (PROBLEM above)"
		if len(sr.Runs) > 0 && sr.Runs[0].Exited != "" {
			why = fmt.Sprintf("the function exited (%s) during the load (PROBLEM above)", sr.Runs[0].Exited)
		} else if len(sr.Runs) > 0 {
			if l := sr.Runs[0].Load; load.SumCounts(l.HTTPErrors) > 0 {
				why = fmt.Sprintf("%d of %d answers were HTTP errors (%s), which count as wrong unless -expect accepts them; %s",
					load.SumCounts(l.HTTPErrors), l.Answered(), load.HTTPErrorCounts(l.HTTPErrors), why)
			}
		}
		return fmt.Sprintf("verdict: NOT shown: %s, so it proves nothing of %s at N=%d", why, rt, sc.N)
	}
	r := sr.Runs[0]
	offered := fmt.Sprintf("%d closed-loop callers", sc.Callers)
	if sc.Model == load.ModelOpen {
		offered = fmt.Sprintf("%.0f/s offered", sc.Rate)
	}
	answered := fmt.Sprintf("every one of %d invocations answered right", r.Load.Answered())
	if c, ok := exactlyOnce(r, sc.N); ok && c.holds() {
		answered = fmt.Sprintf("every one of %d invocations answered right and exactly once, never more than N in flight", r.Load.Answered())
	}
	what := fmt.Sprintf("%s at N=%d, %s (%s), p99 %s", rt, sc.N, sc.Workload, offered, cell(m, bench.P99, show.Latency))
	var shown []string
	if sc.Model == load.ModelOpen {
		if r.Load.Throttles == 0 {
			shown = append(shown, "no throttle, so no overload")
		} else {
			shown = append(shown, fmt.Sprintf("%d throttles (see their meaning above)", r.Load.Throttles))
		}
	}
	notShown := "how it behaves on Lambda, at saturation (make loadtest) or over hours (make soak)"
	if rt == target.Function {
		notShown = "that its answers are right beyond that check, nor what N and memory it needs (loadtest size)"
	}
	return fmt.Sprintf("verdict: %s: %s%s, on this machine, target %s; it does not show %s.",
		what, answered, prefixed(", ", strings.Join(shown, ", ")), rep.Settings.Target, notShown)
}

// prefixed is p+s, or "" for an empty s.
func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
