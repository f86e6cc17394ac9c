package bench

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
)

// Settings is how the bench runs scenarios, from the flags of run
// and compare.
type Settings struct {
	target.Options

	// The load.
	Model       string        `json:"model"`
	Callers     int           `json:"callers,omitempty"`
	Rate        float64       `json:"rate,omitempty"`
	Count       int           `json:"count,omitempty"`
	Duration    time.Duration `json:"-"`
	Warmup      int           `json:"warmup"`
	Rounds      int           `json:"rounds"`
	Idle        time.Duration `json:"-"`
	Settle      time.Duration `json:"-"`
	GrowWindow  time.Duration `json:"-"`
	Pause       time.Duration `json:"-"`
	OnThrottle  string        `json:"onThrottle"` // retry or next
	Reps        int           `json:"reps"`
	IdleOverlap int           `json:"idleOverlap"`

	// The runs' measurement.
	Pin         string        `json:"pin"`
	Profile     string        `json:"profile,omitempty"` // compare: auto, on or off
	CPU         int           `json:"cpu"`
	SampleEvery time.Duration `json:"-"`

	// Flags holds every flag's value as given or defaulted, for the report.
	Flags map[string]string `json:"flags,omitempty"`

	// DurationSet says that -duration was given: it, not its schedule,
	// is then an open scenario's window.
	DurationSet bool `json:"-"`
	// UserEvents is the workload of a user's events, load.EventsWorkload;
	// EventsDesc says what they are, for the report.
	UserEvents load.Workload `json:"-"`
	EventsDesc string        `json:"-"`
	// Progress is how runs show on Stderr: auto (a bar on a terminal),
	// on or off; Answered, when set, counts a single run's answers.
	Progress string        `json:"-"`
	Stderr   io.Writer     `json:"-"`
	Answered *atomic.Int64 `json:"-"`
}

// DefaultSettings are the bench's defaults; run and compare adjust some.
func DefaultSettings() Settings {
	return Settings{
		Options:     target.Options{Target: target.Fake, MemoryMB: 2048, Timeout: 30 * time.Second},
		Model:       load.ModelClosed,
		Duration:    2 * time.Second,
		Warmup:      200,
		Rounds:      2,
		Idle:        10 * time.Second,
		Settle:      3 * time.Second,
		GrowWindow:  60 * time.Second,
		Reps:        3,
		IdleOverlap: 6,
		Pin:         "auto",
		Profile:     "off",
		CPU:         0,
		SampleEvery: 100 * time.Millisecond,
		Progress:    "auto",
		Stderr:      os.Stderr,
	}
}

// What a caller does with a throttled invocation (-on-throttle).
const (
	// ThrottleRetry sends the same invocation again after -throttle-pause.
	ThrottleRetry = "retry"
	// ThrottleNext counts it as rejected and sends the next invocation at
	// once: the no-retry protocol ("closed-loop callers that send their next
	// invocation the moment they get a response, no retry"), under which
	// the emulator's rejection share is the target.
	ThrottleNext = "next"
)

// DefaultOnThrottle is next for the emulator, whose rejection share is
// the rejection target and which a retry after a pause would understate (the
// pause gives the runtime time to poll again, and takes the caller out of
// the race that share measures); retry elsewhere: the fake API answers its
// caller before it reads a queued poll, so its figures measure the runtime
// only when a throttled invocation waits for the next poll, and Lambda's
// 429 is retried by real callers.
func DefaultOnThrottle(where string) string {
	if where == target.RIE {
		return ThrottleNext
	}
	return ThrottleRetry
}

// pinFor says whether runs at N = n are pinned to one CPU.
func (c Settings) pinFor(n int) bool {
	if c.Target == target.Lambda {
		return false
	}
	switch c.Pin {
	case "always":
		return true
	case "never":
		return false
	}
	return n == 1
}

// Profiled says whether runs of rt in sc are Profiled: the open model
// (below saturation), lmigo's runtimes and the floor, when -profile
// allows.
func (c Settings) Profiled(sc Scenario, rt target.Runtime) bool {
	return c.Profile != "off" && c.Target != target.Lambda && sc.Model == load.ModelOpen &&
		(strings.HasPrefix(rt.Name, target.Lmigo) || rt.Name == target.Floor) && rt.Serves(sc.Work)
}

// workload is the workload named so: the user's events, or one of
// parseWorkload's.
func (c Settings) workload(name string) (load.Workload, error) {
	if name == load.EventsWorkload {
		if len(c.UserEvents.Items) == 0 {
			return load.Workload{}, errors.New("workload events: no events (-events FILE)")
		}
		return c.UserEvents, nil
	}
	return load.ParseWorkload(name)
}
