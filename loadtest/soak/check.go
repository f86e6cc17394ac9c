package soak

import (
	"fmt"
	"slices"
)

// What the first phase measured, judged: exactly once, and memory flat.

func (r *Report) problem(format string, a ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}

// check turns what was measured into Problems.
func (r *Report) check() {
	st := r.API
	if r.Wrong > 0 {
		r.problem("%d answers did not match their request, e.g. %v", r.Wrong, r.WrongSamples)
	}
	if st.Invocations != r.Invocations || st.Answered()+st.Late != st.Invocations {
		r.problem("exactly once: %d sent, %d handed out, %d answered, %d after the deadline (410)", r.Invocations, st.Invocations, st.Answered(), st.Late)
	}
	if st.Duplicates != 0 || st.Unknown != 0 || st.Violations != 0 || st.Throttles != 0 || st.CrossWired != 0 || st.NoEcho != 0 {
		r.problem("accounting: %d duplicate answers, %d unknown, %d polls over N, %d throttles, %d cross-wired, %d without echo",
			st.Duplicates, st.Unknown, st.Violations, st.Throttles, st.CrossWired, st.NoEcho)
	}
	if sent := r.ByKind[kindLate]; st.Late != st.Timeouts || st.Timeouts != sent {
		r.problem("%d deadlines ignored: %d timeouts, %d late answers (410)", sent, st.Timeouts, st.Late)
	}
	if want := r.ByKind[kindFail] + r.ByKind[kindPanic]; st.Errors != want {
		r.problem("%d errors and panics sent, %d /error posted", want, st.Errors)
	}
	if r.ExitStatus != 0 {
		r.problem("exit status %d after SIGTERM", r.ExitStatus)
	}
	if r.EMF.Invocations != st.Invocations || r.EMF.Panics != r.ByKind[kindPanic] {
		r.problem("metrics: %d invocations and %d panics reported, %d and %d made",
			r.EMF.Invocations, r.EMF.Panics, st.Invocations, r.ByKind[kindPanic])
	}
	// Flat memory. The live heap after each GC is what a leak grows; it
	// also moves with the buffers of the invocations in flight at that GC
	// (up to N of them, some of 4 MiB), a bounded range that the peak of
	// the first third covers. After a warm-up, the median of the last third
	// must stay within 25 % (plus a margin) of that peak; RSS, which the Go
	// runtime gives back slowly, gets a wider margin. HeapInUse (at the end
	// of each metrics interval, on the GC's sawtooth) is reported only.
	heapJudged, rssJudged := false, false
	if first, last, ok := soakThirds(r.Live, soakHeap, soakPeak); ok {
		heapJudged = true
		if last > first+first/4+16<<20 {
			r.problem("live heap grew: peak %s in the first third, median %s in the last", soakMiB(first), soakMiB(last))
		}
	}
	if first, last, ok := soakThirds(r.RSS, soakRSS, soakPeak); ok {
		rssJudged = true
		if last > first+first/2+32<<20 {
			r.problem("RSS grew: peak %s in the first third, median %s in the last", soakMiB(first), soakMiB(last))
		}
	}
	// A short run on a loaded machine may see too few collections to judge
	// the live heap; the RSS, sampled every interval, is judged then. With
	// neither, the run said nothing about memory: a problem.
	switch {
	case !heapJudged && !rssJudged:
		r.problem("too few GCs (%d) and RSS samples (%d) to judge memory: run longer", len(r.Live), len(r.RSS))
	case !heapJudged:
		r.Notes = append(r.Notes, fmt.Sprintf("live heap not judged: %d GCs traced, too few; RSS judged instead", len(r.Live)))
	}
}

// soakThirds returns firstOf the first third of samples and the median of
// the last third, leaving out the first 30 % (warm-up) and the last sample
// (shutdown).
func soakThirds(samples []Sample, v func(Sample) int64, firstOf func([]Sample, func(Sample) int64) int64) (first, last int64, ok bool) {
	if len(samples) > 2 {
		samples = samples[len(samples)*3/10 : len(samples)-1]
	}
	if len(samples) < 6 {
		return 0, 0, false
	}
	k := len(samples) / 3
	return firstOf(samples[:k], v), soakMedian(samples[len(samples)-k:], v), true
}

func soakHeap(s Sample) int64 { return s.HeapInUse }
func soakRSS(s Sample) int64  { return s.RSS }

func soakPeak(samples []Sample, v func(Sample) int64) int64 {
	var p int64
	for _, s := range samples {
		p = max(p, v(s))
	}
	return p
}

func soakMedian(samples []Sample, v func(Sample) int64) int64 {
	vals := make([]int64, len(samples))
	for i, s := range samples {
		vals[i] = v(s)
	}
	slices.Sort(vals)
	return vals[len(vals)/2]
}

func soakMiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
