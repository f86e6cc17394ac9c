package soak

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/show"
)

func Print(w io.Writer, r *Report) {
	fmt.Fprintf(w, "soak: %d invocations in %v (%.0f/s)\n", r.Invocations, r.Duration.Round(time.Millisecond), r.PerSecond)
	for k := range nKinds {
		fmt.Fprintf(w, "  %-8s %d\n", kindNames[k], r.ByKind[k])
	}
	st := r.API
	fmt.Fprintf(w, "  fake API: %d handed out, %d ended (%d responses, %d errors, %d timeouts), %d late (410), %d faults, %d duplicates, %d cross-wired, %d without echo, max %d outstanding of N\n",
		st.Invocations, st.Ended(), st.Responses, st.Errors, st.Timeouts, st.Late, st.Faults, st.Duplicates, st.CrossWired, st.NoEcho, st.MaxOutstanding)
	if f, l, ok := soakThirds(r.Live, soakHeap, soakPeak); ok {
		fmt.Fprintf(w, "  live heap after GC: peak %s in the first third, median %s in the last (%d GCs)\n", soakMiB(f), soakMiB(l), len(r.Live))
	}
	if f, l, ok := soakThirds(r.Heap, soakHeap, soakMedian); ok {
		fmt.Fprintf(w, "  HeapInUse (EMF): median %s in the first third, %s in the last (%d samples)\n", soakMiB(f), soakMiB(l), len(r.Heap))
	}
	if f, l, ok := soakThirds(r.RSS, soakRSS, soakPeak); ok {
		fmt.Fprintf(w, "  RSS: peak %s in the first third, median %s in the last (%d samples)\n", soakMiB(f), soakMiB(l), len(r.RSS))
	}
	fmt.Fprintf(w, "  exit status %d, %v after SIGTERM\n", r.ExitStatus, r.ExitAfter.Round(time.Millisecond))
	printForms(w, r.Forms)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
	if r.OK() {
		fmt.Fprintln(w, "  OK: every invocation answered exactly once, memory flat; every form answered each invocation handed out once, with its own token")
		return
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "  PROBLEM:", p)
	}
	for _, f := range r.Forms {
		for _, p := range f.Problems {
			fmt.Fprintf(w, "  PROBLEM form %s: %s\n", f.Form, p)
		}
	}
}

// printForms writes the forms phase: one line per form, then what failed.
func printForms(w io.Writer, reps []*formReport) {
	if len(reps) == 0 {
		return
	}
	fmt.Fprintf(w, "  handler forms (faults %s; %s; one /next in %d reset):\n", strings.Join(soakFaultList(), ", "), faultSIGTERM, soakPollResetEvery)
	lines := [][]string{{"    form", "sent", "handed out", "once", "lost", "duplicated", "reposted", "late writes", "longest log", "mixed", "wrong", "no echo", "cross-wired", "withheld", "faults", "exit"}}
	for _, r := range reps {
		lines = append(lines, []string{"    " + r.Form,
			fmt.Sprint(r.Sent), fmt.Sprint(r.HandedOut), fmt.Sprint(r.Once), fmt.Sprint(r.Lost), fmt.Sprint(r.Duplicated),
			fmt.Sprint(r.Reposted), fmt.Sprint(r.LateWrites), fmt.Sprint(r.LongestLog),
			fmt.Sprint(r.Mixed), fmt.Sprint(r.Wrong), fmt.Sprint(r.NoEcho), fmt.Sprint(r.CrossWired), fmt.Sprint(r.Withheld),
			fmt.Sprint(r.API.Faults), fmt.Sprintf("%d in %v", r.ExitStatus, r.ExitAfter.Round(time.Millisecond))})
	}
	show.Aligned(w, lines)
	// One line per form, failure and fault; findings are sorted so.
	for _, r := range reps {
		fs := r.Findings
		for len(fs) > 0 {
			n := 1
			for n < len(fs) && fs[n].What == fs[0].What && fs[n].Fault == fs[0].Fault {
				n++
			}
			var total int64
			var dos []string
			for _, f := range fs[:n] {
				total += f.Count
				dos = append(dos, fmt.Sprintf("%s %d", f.Do, f.Count))
			}
			fmt.Fprintf(w, "    FOUND %s: %s under fault %s: %d (handler asked to: %s; request IDs %s)\n",
				r.Form, fs[0].What, fs[0].Fault, total, strings.Join(dos, ", "), strings.Join(fs[0].IDs, ", "))
			fs = fs[n:]
		}
	}
}

// soakFaultList names the faults of the cycle, once each.
func soakFaultList() []string {
	var l []string
	for _, f := range soakFaultCycle {
		if f != faultNone && !slices.Contains(l, f) {
			l = append(l, f)
		}
	}
	return l
}
