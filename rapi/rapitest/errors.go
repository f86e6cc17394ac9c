package rapitest

import "errors"

// Errors returned by the server. Invoke may also return the context's error.
var (
	// ErrThrottled is returned by Invoke when no /next is pending and
	// Options.Queue is false: the platform's Runtime.Unavailable.
	ErrThrottled = errors.New("rapitest: no /next pending (Runtime.Unavailable)")
	// ErrClosed is returned by Invoke, WaitPolls and WaitPoll once Close
	// has been called.
	ErrClosed = errors.New("rapitest: server closed")
	// ErrInvalidOptions wraps every error of New about its Options.
	ErrInvalidOptions = errors.New("rapitest: invalid options")
)
