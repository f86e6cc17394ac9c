package concurrent

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/lmigo/lmigo/concurrent/internal/zone"
)

// Errors returned by New and Run, and by a writer lent to a handler.
// Wrapped errors keep them reachable with errors.Is.
var (
	// ErrInvalidHandler is returned by New when the handler is not one of
	// the accepted forms.
	ErrInvalidHandler = errors.New("concurrent: invalid handler")
	// ErrConfig is returned by New when the environment does not hold a
	// valid configuration; the wrapped errors name every bad variable.
	// StartWithOptions fails init with it for a lambda.Option it cannot
	// read.
	ErrConfig = errors.New("concurrent: invalid configuration")
	// ErrRuntimeAPI is returned by Run when the Runtime API answers 5xx,
	// or 4xx to /next. No retry helps, so the process should exit.
	ErrRuntimeAPI = errors.New("concurrent: runtime API failure")
	// ErrResponseTooLarge is the error an invocation fails with when its
	// buffered response is larger than limits.Config.MaxResponseBytes, and
	// the error NewHandler's Invoke returns for a reader result longer
	// than it reads.
	ErrResponseTooLarge = errors.New("response too large")
	// ErrInvocationEnded is returned by a streamed io.WriterTo's writer
	// once WriteTo has returned. The slot streams other answers by then.
	ErrInvocationEnded = errors.New("concurrent: write after the invocation ended")
	// ErrLateWork is returned by Go called once its invocation has been
	// answered (by a goroutine the handler left behind): the function
	// does not run.
	ErrLateWork = errors.New("concurrent: work started after its invocation ended")
)

// The error types the runtime itself answers with, all of them: an
// invocation's /error (Lambda-Runtime-Function-Error-Type and the body's
// errorType) or the init error.
const (
	// Init errors (Start).
	errTypeInvalidConfiguration = "Runtime.InvalidConfiguration"
	errTypeInvalidHandler       = "Runtime.InvalidHandler"
	errTypeInitError            = "Runtime.InitError"

	// An invocation the handler could not be given.
	errTypeRequestTooLarge        = "Runtime.RequestTooLarge"
	errTypeInvalidDeadline        = "Runtime.InvalidDeadline"
	errTypeInvalidClientContext   = "Runtime.InvalidClientContext"
	errTypeInvalidCognitoIdentity = "Runtime.InvalidCognitoIdentity"
	// errTypeInvalidInvocation: its /next answer broke HTTP framing or a
	// bound (headers over 64 KiB, a header line that does not parse).
	errTypeInvalidInvocation = "Runtime.InvalidInvocation"
	// errTypeTruncatedInvocation: the connection failed or stalled in the
	// middle of its /next answer, or the shutdown interrupted it.
	errTypeTruncatedInvocation = "Runtime.TruncatedInvocation"

	// An invocation whose handler did not give an answer that can be sent.
	errTypeHandlerExited    = "Runtime.HandlerExited" // runtime.Goexit
	errTypeResponseTooLarge = "Function.ResponseSizeTooLarge"
	// errTypeUnsendable: the intended answer was refused before it was
	// written; this error takes its place (answer.go).
	errTypeUnsendable = "Runtime.InvalidResponse"
	// errTypeStreamInterrupted: a stream's connection ended before the
	// Runtime API answered it; a stream cannot be sent again (stream.go).
	errTypeStreamInterrupted = "Runtime.StreamInterrupted"
	// invalidErrorType stands in the error type header for a type that
	// cannot be sent there (answer.go).
	invalidErrorType = "Function.InvalidErrorType"
)

// Errors returned by AvailabilityZoneID.
var (
	// ErrNoMetadata is returned by AvailabilityZoneID outside Lambda, where
	// AWS_LAMBDA_METADATA_API or AWS_LAMBDA_METADATA_TOKEN is not set.
	ErrNoMetadata = zone.ErrNoMetadata
	// ErrMetadata is wrapped by the error AvailabilityZoneID returns when
	// the endpoint is set but cannot be read. The address may be bad, the
	// connection may fail, or the answer may lack a zone ID.
	ErrMetadata = zone.ErrMetadata
)

// PanicError is a panic recovered from a handler. The invocation fails with
// it and the process goes on.
type PanicError struct {
	// Value is the value the handler panicked with.
	Value any
	// Stack holds the program counters of the panicking goroutine as seen
	// from the recovering function, innermost first (see runtime.Callers).
	Stack []uintptr
}

// Error returns "panic: " and the value.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As see through the panic.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// maxPanicFrames bounds the stack kept for a panic; the recovering frames
// and runtime.gopanic come on top of it.
const maxPanicFrames = 32

func newPanicError(v any) *PanicError {
	var pcs [maxPanicFrames + 8]uintptr
	n := runtime.Callers(2, pcs[:]) // from the deferred function that recovered
	return &PanicError{Value: v, Stack: append([]uintptr(nil), pcs[:n]...)}
}
