package concurrent

import (
	"context"
	"errors"
	"fmt"

	"github.com/lmigo/lmigo/rapi"
)

// Error types of invocations whose /next answer could not be read whole.
const (
	// errTypeInvalidInvocation: the answer broke HTTP framing or a bound
	// (headers over 64 KiB, a header line that does not parse).
	errTypeInvalidInvocation = "Runtime.InvalidInvocation"
	// errTypeTruncatedInvocation: the connection failed or stalled in the
	// middle of the answer, or the shutdown interrupted it.
	errTypeTruncatedInvocation = "Runtime.TruncatedInvocation"
)

// failUnreadable answers, with an error, an invocation whose /next answer
// broke off after its request ID: the Runtime API handed it out, so its
// caller would otherwise wait for its deadline.
func (rt *Runtime) failUnreadable(s *slot, err error) {
	errorType := errTypeInvalidInvocation
	if errors.Is(err, rapi.ErrTransport) || errors.Is(err, context.Canceled) {
		errorType = errTypeTruncatedInvocation
	}
	rt.failUnserved(s, errorType, fmt.Errorf("the invocation could not be read: %w", err))
}
