package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/lmigo/lmigo/loadtest/target"
)

// Result is every run of every scenario of one execution, in the order
// the scenarios ran.
type Result struct {
	Started   time.Time
	Elapsed   time.Duration
	Host      Host
	Scenarios []ScenarioRuns
}

// ScenarioRuns are the runs of one scenario, in the order they ended.
type ScenarioRuns struct {
	Scenario Scenario
	Runs     []RunResult
}

// Execute runs every scenario for every runtime, interleaved: for each
// repetition the runtimes in turn (A B A B ...). A scenario at N=1 is
// pinned, this process included, for all its runs. In scenarios with an
// idle period (grow), up to -idle-overlap runs idle at once: the next run
// starts while the ones before it wait out their idle period (each ends
// its own exactly -idle after its load, reads RSS and stops), which costs
// them nothing (an idle runtime sleeps in its polls) and makes the grow
// scenarios several times shorter. It stops at the first scenario that
// cannot run, with what ran before it.
func Execute(ctx context.Context, s Settings, scs []Scenario, rts []target.Runtime) (Result, error) {
	res := Result{Started: time.Now(), Host: host()}
	prog := newProgress(s, runCount(s, scs, rts))
	defer prog.close()
	var err error
	for i := range scs {
		if err = ctx.Err(); err != nil {
			break
		}
		var runs ScenarioRuns
		if runs, err = runScenario(ctx, s, &scs[i], rts, prog); err != nil {
			break
		}
		res.Scenarios = append(res.Scenarios, runs)
	}
	res.Elapsed = time.Since(res.Started)
	if err == nil {
		err = ctx.Err()
	}
	return res, err
}

// runCount is how many runs Execute makes of scs: -reps of each runtime
// that serves the scenario, and one more of each it profiles.
func runCount(s Settings, scs []Scenario, rts []target.Runtime) int {
	runs := 0
	for _, sc := range scs {
		for _, rt := range rts {
			if rt.Serves(sc.Work) {
				runs += s.Reps
			}
			if s.Profiled(sc, rt) {
				runs++
			}
		}
	}
	return runs
}

// runScenario runs sc for every runtime of rts, -reps times interleaved,
// then the profiles, each in a run of its own.
func runScenario(ctx context.Context, s Settings, sc *Scenario, rts []target.Runtime, prog *progress) (ScenarioRuns, error) {
	if sc.PinCPU >= 0 {
		restore, err := target.PinSelf(sc.PinCPU)
		if err != nil {
			return ScenarioRuns{}, fmt.Errorf("scenario %s: pin to CPU %d: %w", sc.Name, sc.PinCPU, err)
		}
		defer restore()
	}
	sr := ScenarioRuns{Scenario: *sc}
	overlap := 1
	if sc.Idle > 0 {
		overlap = s.IdleOverlap
	}
	var pending []chan RunResult // runs idling, oldest first
	for r := 1; r <= s.Reps && ctx.Err() == nil; r++ {
		for _, rt := range rts {
			if !rt.Serves(sc.Work) {
				continue // not run: no figures, no problem (see notes)
			}
			for len(pending) >= overlap {
				sr.Runs = append(sr.Runs, prog.end(<-pending[0]))
				pending = pending[1:]
			}
			prog.begin(fmt.Sprintf("%s %s rep %d/%d", sc.Name, rt.Name, r, s.Reps))
			l := beginRun(ctx, s, sc, rt, r, false)
			done := make(chan RunResult, 1)
			if overlap == 1 {
				done <- l.finish(ctx)
			} else {
				// The idle period ends, and RSS is read, at the same
				// time after the load for every run, however the
				// others are scheduled.
				go func() { done <- l.finish(ctx) }()
			}
			pending = append(pending, done)
		}
	}
	for _, done := range pending {
		sr.Runs = append(sr.Runs, prog.end(<-done))
	}
	// The profiles, in runs of their own: perf costs CPU.
	for _, rt := range rts {
		if !s.Profiled(*sc, rt) || ctx.Err() != nil {
			continue
		}
		prog.begin(fmt.Sprintf("%s %s profile", sc.Name, rt.Name))
		sr.Runs = append(sr.Runs, prog.end(beginRun(ctx, s, sc, rt, s.Reps+1, true).finish(ctx)))
	}
	return sr, nil
}
