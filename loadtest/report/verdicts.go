package report

import (
	"slices"
	"strings"
)

// verdicts sums up the targets of runtime in sr that keep takes (by what
// they say): "met" when all are, "missed: " and what was missed
// otherwise, "-" when it has none.
func verdicts(rep *Report, sr ScenarioReport, runtime string, keep func(what string) bool) string {
	label := scenarioLabel(sr.Scenario)
	var checked int
	var missed []string
	note := func(what string, met bool) {
		checked++
		if !met {
			short, _, _ := strings.Cut(what, " <=")
			if !slices.Contains(missed, short) {
				missed = append(missed, short)
			}
		}
	}
	for _, c := range rep.FloorTargets {
		if c.Runtime == runtime && c.Scenario == label && keep(c.What) {
			note(c.What, c.Met)
		}
	}
	for _, c := range sr.Targets {
		if c.Runtime == runtime && keep(c.What) {
			note(c.What, c.Holds)
		}
	}
	switch {
	case checked == 0:
		return "-"
	case len(missed) == 0:
		return "met"
	}
	return "missed: " + strings.Join(missed, ", ")
}
