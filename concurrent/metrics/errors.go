package metrics

import "github.com/lmigo/lmigo/concurrent/internal/emf"

// Errors of the calls that record nothing. Wrapped errors say which name,
// unit, value or key, and keep these reachable with errors.Is.
var (
	// ErrNoInvocation: the context is not an invocation's of the lmigo
	// runtime (a plain context, a test's): nothing is recorded.
	ErrNoInvocation = emf.ErrNoInvocation
	// ErrNoNamespace: POWERTOOLS_METRICS_NAMESPACE is unset, so no
	// metric can be written; nothing is recorded.
	ErrNoNamespace = emf.ErrNoNamespace
	// ErrInvocationEnded: the invocation has ended and its metrics are
	// written (a goroutine it left behind called).
	ErrInvocationEnded = emf.ErrInvocationEnded
	// ErrInvalid: a metric name, unit, value (NaN, ±Inf), dimension key
	// or value, or metadata key or value that EMF or CloudWatch does not
	// take, or a name already used by a member of another kind.
	ErrInvalid = emf.ErrInvalid
	// ErrTooManyDimensions: a dimension past the 30 of a dimension set
	// (service counts as one).
	ErrTooManyDimensions = emf.ErrTooManyDimensions
	// ErrTooLarge: dimensions and metadata past 16 KiB, which every
	// document repeats and which must leave room in its line.
	ErrTooLarge = emf.ErrTooLarge
)
