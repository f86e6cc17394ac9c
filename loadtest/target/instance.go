package target

import (
	"errors"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// Instance is one runtime started on a target, ready for load.
type Instance struct {
	Inv   load.Invoker
	Ready time.Duration // exec (fake) or emulator start (rie) to init done; 0 when unknown
	// ReadyCPU is the runtime's CPU time by then (fake): on a busy machine
	// ready is a share of the CPU, ReadyCPU the runtime's own cost.
	ReadyCPU time.Duration
	PID      int // the runtime's process, 0 when not measurable (lambda)
	// Procs lists the processes measured as the runtime: pid alone for
	// the runtimes built here, the whole group for a user's function.
	Procs func() []int
	// Helpers are the other processes serving the runtime (the emulator),
	// whose CPU is the driver's.
	Helpers []int
	API     *rapitest.Server
	GC      *measure.GCCounter // nil when GCs cannot be counted
	halt    func() error       // Stop
	// exited is closed when the function's process (fake) or the
	// emulator (rie) has ended, nil when that cannot be seen (lambda);
	// exitState then says how, "" when unknown.
	exited    <-chan struct{}
	exitState func() string
	rie       bool // in the emulator, whose own lines share the output
}

// Stop ends the runtime and all it started, and what serves it (the fake
// API, the emulator), and waits for them.
func (in *Instance) Stop() error { return in.halt() }

// CPU is the CPU time of the runtime's processes.
func (in *Instance) CPU() (time.Duration, error) {
	if in.Procs == nil {
		return 0, errors.New("no process")
	}
	return measure.ReadGroupCPU(in.Procs())
}

// Status is the memory of the runtime's processes.
func (in *Instance) Status() (measure.Status, error) {
	if in.Procs == nil {
		return measure.Status{}, errors.New("no process")
	}
	return measure.ReadGroupStatus(in.Procs())
}

// Tail returns the last output of the runtime, for error messages.
func (in *Instance) Tail() string {
	if in.GC == nil {
		return ""
	}
	t := in.GC.Tail()
	if len(t) > 2048 {
		t = t[len(t)-2048:]
	}
	return t
}
