package limits

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error FromEnv returns wraps one of them.
var (
	// ErrInvalid marks an environment variable whose value cannot be used.
	// Each occurrence is carried by a *VarError.
	ErrInvalid = errors.New("limits: invalid environment variable")
)

// VarError describes one environment variable that failed validation.
type VarError struct {
	Name   string // variable name, e.g. AWS_LAMBDA_MAX_CONCURRENCY
	Value  string // the value as it was found, before trimming
	Reason string // what is wrong and what is accepted
}

// maxShownValue caps how much of a value Error prints, so that a huge
// value cannot flood the one log line that reports it.
const maxShownValue = 64

// Error returns `NAME="value": reason`.
func (e *VarError) Error() string {
	v := e.Value
	if len(v) > maxShownValue {
		return fmt.Sprintf("%s=%q...: %s", e.Name, v[:maxShownValue], e.Reason)
	}
	return fmt.Sprintf("%s=%q: %s", e.Name, v, e.Reason)
}

// Unwrap returns ErrInvalid, so errors.Is(err, ErrInvalid) holds.
func (e *VarError) Unwrap() error { return ErrInvalid }
