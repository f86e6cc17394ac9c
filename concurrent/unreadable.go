package concurrent

import (
	"context"
	"errors"
	"fmt"

	"github.com/lmigo/lmigo/rapi"
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
