package report

import (
	"time"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/loadtest/target"
)

// Report is everything a run or a comparison produced; it is written as
// JSON as it is.
type Report struct {
	Kind    string        `json:"kind"` // run or compare
	Started time.Time     `json:"started"`
	Elapsed show.Duration `json:"elapsed"`
	Host    bench.Host    `json:"host"`
	// Config is the command's configuration, for the JSON; Settings the
	// bench's part of it, which the report reads.
	Config    any              `json:"config"`
	Settings  bench.Settings   `json:"-"`
	Runtimes  []target.Runtime `json:"runtimes"`
	Scenarios []ScenarioReport `json:"scenarios"`
	// FloorTargets are lmigo's targets against the floor, across scenarios.
	FloorTargets []FloorCheck `json:"floorTargets,omitempty"`
	Notes        []string     `json:"notes"`
}

// ScenarioReport is one scenario: every run, the median of each metric per
// runtime over the repetitions, and the ratios of the medians: Ratios is
// the first runtime's against aws-lambda-go (lmigo / aws-lambda-go),
// MoreRatios those of the others (lmigo-raw), by runtime.
type ScenarioReport struct {
	Scenario   bench.Scenario                `json:"scenario"`
	Runs       []bench.RunResult             `json:"runs"`
	Medians    map[string]map[string]float64 `json:"medians"`
	Ratios     map[string]float64            `json:"ratios,omitempty"`
	MoreRatios map[string]map[string]float64 `json:"moreRatios,omitempty"`
	// FloorRatios are each runtime's medians against the floor's, by
	// runtime, when the floor ran and is not itself the reference.
	FloorRatios map[string]map[string]float64 `json:"floorRatios,omitempty"`
	// Targets are the memory targets checked on the medians.
	Targets []TargetCheck `json:"targets,omitempty"`
}

// Problems counts the runs that had problems.
func (r *Report) Problems() int {
	n := 0
	for _, s := range r.Scenarios {
		for _, run := range s.Runs {
			if len(run.Problems) > 0 {
				n++
			}
		}
	}
	return n
}

// New is the report of an execution of scs for rts: its runs, their
// medians and ratios, the targets checked, and the notes that say how
// the figures were taken.
func New(kind string, config any, s bench.Settings, scs []bench.Scenario, rts []target.Runtime, res bench.Result) *Report {
	rep := &Report{Kind: kind, Started: res.Started, Elapsed: show.Duration(res.Elapsed), Host: res.Host, Config: config, Settings: s, Runtimes: rts}
	for _, runs := range res.Scenarios {
		sr := ScenarioReport{Scenario: runs.Scenario, Runs: runs.Runs}
		summarize(&sr, rts)
		sr.Targets = checkTargets(s, sr)
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	rep.FloorTargets = floorTargets(rep)
	rep.Notes = notes(s, scs, rts)
	return rep
}
