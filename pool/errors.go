package pool

import "errors"

// Errors returned by this package. They are returned as is or wrapped with
// %w; test with errors.Is.
var (
	// ErrFull is returned by Workers.Invoke when size tasks are already
	// running. The task was not started and the argument is still the
	// caller's.
	errFull = errors.New("pool: all workers busy")

	// ErrClosed is returned by Workers.Invoke after Release.
	errClosed = errors.New("pool: workers released")

	// ErrTimeout is returned by Workers.Release when tasks are still
	// running when its timeout expires. The pool is closed all the same.
	errTimeout = errors.New("pool: release timed out")

	// ErrInvalid is returned by NewWorkers for a bad size, a nil function
	// or a WithDone hook whose type does not match the pool's.
	errInvalid = errors.New("pool: invalid argument")
)
