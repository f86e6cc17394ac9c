package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/show"
)

// markdown renders the report as Markdown, for the docs.
func markdown(rep *Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# lmigo load test: %s\n\n", rep.Kind)
	h := rep.Host
	fmt.Fprintf(&b, "%s, target `%s`, %s (%d CPUs), Linux %s, %s/%s, %s; %d repetition(s); took %s.\n\n",
		rep.Started.UTC().Format("2006-01-02 15:04 MST"), rep.Settings.Target, h.CPUModel, h.CPUs, h.Kernel, "linux", h.Arch, h.GoVersion,
		rep.Settings.Reps, time.Duration(rep.Elapsed).Round(time.Second))
	if rep.Kind == "run" && len(rep.Scenarios) == 1 && len(rep.Runtimes) == 1 {
		// The terminal's report, line for line.
		glance, details := runLines(rep)
		fmt.Fprintf(&b, "%s.\n\n", runTitle(rep))
		for _, part := range []struct {
			head  string
			lines [][]string
		}{{"At a glance", glance}, {"Details", details}} {
			fmt.Fprintf(&b, "| %s | |\n|---|---|\n", part.head)
			for _, l := range part.lines {
				b.WriteString("| " + strings.Join(l, " | ") + " |\n")
			}
			b.WriteString("\n")
		}
	}
	if rep.Kind != "run" { // a run's figures are its glance and details
		show.MarkdownTable(&b, rows(rep))
		if bs := belowSatRows(rep); len(bs) > 1 {
			fmt.Fprintf(&b, "## %s\n\n", belowSatTitle)
			show.MarkdownTable(&b, bs)
		}
		if ls := latencyRows(rep); len(ls) > 1 {
			fmt.Fprintf(&b, "## %s\n\n", latencyTitle)
			show.MarkdownTable(&b, ls)
		}
	}
	for _, l := range summaryLines(rep) {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n## Runs\n\n| scenario | runtime | rep | invocations | function errors | throttles | abandoned | max polls+in flight | violations | exactly once | problems, warnings |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, sr := range rep.Scenarios {
		for _, r := range sr.Runs {
			maxOut, viol, once := "-", "-", "not checked"
			if c, ok := exactlyOnce(r, sr.Scenario.N); ok {
				once, _, _ = strings.Cut(c.String(), ":")
			}
			if r.API != nil {
				maxOut = fmt.Sprintf("%d / %d", r.API.MaxOutstanding, sr.Scenario.N)
				viol = fmt.Sprint(r.API.Violations)
			}
			probs := "none"
			if all := append(append([]string(nil), r.Problems...), r.Warnings...); len(all) > 0 {
				probs = strings.ReplaceAll(strings.Join(all, "; "), "\n", " ")
				probs = strings.ReplaceAll(probs, "|", "\\|")
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %s | %s | %s | %s |\n", r.Scenario, r.Runtime, r.Rep,
				r.Load.Answered(), r.Load.FuncErrors, r.Load.Throttles, r.Load.Abandoned, maxOut, viol, once, probs)
		}
	}
	return b.Bytes()
}
