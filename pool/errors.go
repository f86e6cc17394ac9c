package pool

import "errors"

// Errors returned by Workers, wrapped with %w. They are unexported: the
// runtime, the one caller, never needs to tell them apart.
var (
	// errFull is returned by Invoke when size tasks are already running.
	// The task was not started and the argument is still the caller's.
	errFull = errors.New("pool: all goroutines busy")

	// errClosed is returned by Invoke after Release.
	errClosed = errors.New("pool: released")

	// errTimeout is returned by Release when tasks are still running when
	// its timeout expires. The pool is closed all the same.
	errTimeout = errors.New("pool: release timed out")

	// errInvalid is returned by NewWorkers for a bad size or a nil
	// function.
	errInvalid = errors.New("pool: invalid argument")
)
