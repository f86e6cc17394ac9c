package concurrent

import "errors"

// Errors returned by New and Run. Wrapped errors keep them reachable with
// errors.Is.
var (
	// ErrInvalidHandler is returned by New when the handler is not one of
	// the accepted forms.
	ErrInvalidHandler = errors.New("concurrent: invalid handler")
	// ErrConfig is returned by New when the environment does not hold a
	// valid configuration; the wrapped errors name every bad variable.
	ErrConfig = errors.New("concurrent: invalid configuration")
	// ErrRuntimeAPI is returned by Run when the Runtime API reports that the
	// environment is broken (a 5xx answer): the process should exit.
	ErrRuntimeAPI = errors.New("concurrent: runtime API failure")
	// ErrResponseTooLarge is the error an invocation fails with when its
	// buffered response is larger than limits.Config.MaxResponseBytes.
	ErrResponseTooLarge = errors.New("response too large")
)
