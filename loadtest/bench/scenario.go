package bench

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/show"
)

// Scenario is one load on one runtime configuration.
type Scenario struct {
	Name     string        `json:"name"`
	Workload string        `json:"workload"`
	Events   string        `json:"events,omitempty"` // workload events: what they are
	N        int           `json:"n"`
	Model    string        `json:"model"`
	Callers  int           `json:"callers,omitempty"` // closed
	Rate     float64       `json:"rate,omitempty"`    // open, invocations/s
	Count    int           `json:"count"`
	Window   show.Duration `json:"window"`
	Warmup   int           `json:"warmup,omitempty"`
	Rounds   int           `json:"rounds,omitempty"` // grow
	Idle     show.Duration `json:"idle,omitempty"`   // wait after the load before RSS is read again
	Settle   show.Duration `json:"settle,omitempty"` // grow: wait after the warm-up before RSS is read first
	PinCPU   int           `json:"pinCPU"`           // -1: not pinned

	Work load.Workload `json:"-"` // what it sends
}

// Row is one scenario of a set: a workload at an N, in the closed model
// or, with a rate, in the open model at that many invocations per second.
type Row struct {
	Workload string
	N        int
	Rate     float64 // open model; 0: the closed one (or -model open -rate)
	Count    int     // before -count; 0: the workload's default
}

// Name is WORKLOAD-nN, and -rR for the open model at R/s (tiny-n64-r1000).
func (r Row) Name() string {
	name := strings.ReplaceAll(r.Workload, ":", "-") + "-n" + strconv.Itoa(r.N)
	if r.Rate > 0 {
		name += "-r" + strconv.FormatFloat(r.Rate, 'f', -1, 64)
	}
	return name
}

// NewScenario builds the scenario of r from s; count 0 takes the
// workload's default. Without a rate of its own, the row takes -model and
// -rate.
func NewScenario(s Settings, r Row) (Scenario, error) {
	w, err := s.workload(r.Workload)
	if err != nil {
		return Scenario{}, err
	}
	n := r.N
	sc := Scenario{
		Workload: r.Workload,
		N:        n,
		Model:    s.Model,
		Rate:     s.Rate,
		Count:    r.Count,
		Window:   show.Duration(s.Duration),
		Warmup:   s.Warmup,
		PinCPU:   -1,
		Work:     w,
	}
	if r.Workload == load.EventsWorkload {
		sc.Events = s.EventsDesc
	}
	if r.Rate > 0 {
		sc.Model, sc.Rate = load.ModelOpen, r.Rate
	}
	if s.Count > 0 {
		sc.Count = s.Count
	}
	if sc.Count <= 0 {
		sc.Count = 4000
	}
	// Two per slot at least, so that every slot has served before the
	// window opens; a tenth of the run at most: 200 warm-up invocations
	// of 6 MiB would take longer than the run.
	sc.Warmup = min(max(sc.Warmup, 2*n), max(sc.Count/10, 1))
	switch {
	case w.Waved():
		sc.Model, sc.Warmup, sc.Rate = load.ModelWaves, len(w.Warm), 0
		sc.Rounds = s.Rounds
		sc.Count = s.Rounds * len(w.Waves(n)) * n
		sc.Idle = show.Duration(s.Idle)
		sc.Settle = show.Duration(s.Settle)
		sc.Window = show.Duration(s.GrowWindow)
	case sc.Model == load.ModelOpen:
		// The window is the schedule and a grace in which an invocation
		// throttled near its end is still retried, unless -duration says.
		if !s.DurationSet {
			sc.Window = show.Duration(time.Duration(float64(sc.Count)/sc.Rate*float64(time.Second)) + load.OpenGrace)
		}
	default:
		sc.Rate = 0
		sc.Callers = s.Callers
		if sc.Callers <= 0 {
			sc.Callers = n
		}
	}
	sc.Name = Row{Workload: r.Workload, N: n, Rate: sc.Rate}.Name()
	if s.pinFor(n) {
		sc.PinCPU = s.CPU
	}
	return sc, nil
}

// Sets of scenarios (-set); the standard set, `make loadtest`, is both.
const (
	SetStandard   = "standard"
	SetSaturation = "saturation"
	SetBelowSat   = "belowsat"
)

// saturationSet is the closed model: callers flat out.
var saturationSet = []Row{
	{Workload: "tiny", N: 1, Count: 10000},
	{Workload: "tiny", N: 8, Count: 10000},
	{Workload: "tiny", N: 64, Count: 10000},
	// LMI's N goes up to 1600. 30000 invocations fill the 2 s window
	// there: with 10000, about 6 per slot, the ramp and the tail of 1600
	// callers moved inv/s by a fifth between runs.
	{Workload: "tiny", N: 512, Count: 30000},
	{Workload: "tiny", N: 1600, Count: 30000},
	{Workload: "size:1KiB", N: 1, Count: 10000},
	// About 1 GiB each, so that CPU per invocation is read to a few per
	// cent (parseScenarioName).
	{Workload: "size:1MiB", N: 1, Count: 1024},
	{Workload: "size:6MiB", N: 1, Count: 170},
	{Workload: "grow", N: 1},
	{Workload: "grow", N: 8},
	{Workload: "grow", N: 16},
	{Workload: "grow", N: 32},
	{Workload: "grow", N: 64},
}

// belowSatSet is where an LMI environment spends its life: the open model
// at rates the slots serve with room to spare, tiny and I/O-bound
// handlers, 10 s each (CPU time comes in 10 ms ticks), and a burst of
// grown stacks at N=1600. belowSatTargets checks them.
var belowSatSet = []Row{
	{Workload: "tiny", N: 64, Rate: 1000, Count: 10000},
	{Workload: "tiny", N: 512, Rate: 1000, Count: 10000},
	{Workload: "wait:20ms", N: 64, Rate: 1000, Count: 10000},
	{Workload: "wait:50ms", N: 512, Rate: 1500, Count: 15000},
	{Workload: "wait:100ms", N: 1600, Rate: 1500, Count: 15000},
	{Workload: "stack:32KiB", N: 1600},
}

// SetRows are the rows of the set named so.
func SetRows(name string) ([]Row, error) {
	switch name {
	case SetStandard:
		return slices.Concat(saturationSet, belowSatSet), nil
	case SetSaturation:
		return saturationSet, nil
	case SetBelowSat:
		return belowSatSet, nil
	}
	return nil, fmt.Errorf("-set %q: want %s, %s or %s", name, SetStandard, SetSaturation, SetBelowSat)
}

// SetNames are the scenario names of the set named so (none for an
// unknown set).
func SetNames(set string) []string {
	rows, _ := SetRows(set)
	var names []string
	for _, r := range rows {
		names = append(names, r.Name())
	}
	return names
}

// scenarioNameRE is row.name's form: WORKLOAD-nN, and -rR for the open model.
var scenarioNameRE = regexp.MustCompile(`^(.+)-n([0-9]+)(?:-r([0-9]+(?:\.[0-9]+)?))?$`)

// ParseScenarioName reads a row's name (size:S written size-S, and wait:D
// and stack:S alike) into the row: the standard set's for its scenarios,
// else, for a size, a count that sends about 1 GiB of responses (1 MiB:
// 1024, as in the standard set), between 50 and 10000: CPU time is read
// in 10 ms ticks, which over 1024 invocations is 10 µs each; in the open
// model, 10 s of invocations.
func ParseScenarioName(name string) (Row, error) {
	all, _ := SetRows(SetStandard)
	for _, r := range all {
		if r.Name() == name {
			return r, nil
		}
	}
	m := scenarioNameRE.FindStringSubmatch(name)
	var r Row
	if m != nil {
		r.N, _ = strconv.Atoi(m[2])
		if m[3] != "" {
			r.Rate, _ = strconv.ParseFloat(m[3], 64)
		}
	}
	if m == nil || r.N < 1 || m[3] != "" && r.Rate <= 0 {
		return Row{}, fmt.Errorf("scenario %q: want WORKLOAD-nN or WORKLOAD-nN-rR (N >= 1, R > 0), e.g. size-256KiB-n1, tiny-n64-r1000; the standard set is: %s", name, strings.Join(SetNames(SetStandard), ", "))
	}
	r.Workload = m[1]
	for _, kind := range []string{"size", "wait", "stack"} {
		if v, ok := strings.CutPrefix(r.Workload, kind+"-"); ok {
			r.Workload = kind + ":" + v
		}
	}
	w, err := load.ParseWorkload(r.Workload)
	if err != nil {
		return Row{}, fmt.Errorf("scenario %q: %w", name, err)
	}
	if sz, err := load.ParseSize(strings.TrimPrefix(r.Workload, "size:")); err == nil && len(w.Items) == 1 && sz > 0 {
		r.Count = min(max(1<<30/sz, 50), 10000)
	}
	if r.Rate > 0 {
		r.Count = max(int(10*r.Rate), 1)
	}
	return r, nil
}
