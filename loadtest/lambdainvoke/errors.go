package lambdainvoke

import "errors"

// Errors returned by New.
var (
	// ErrNoFunction: Options.FunctionName is empty.
	ErrNoFunction = errors.New("lambdainvoke: no function name")

	// ErrNoRegion: no region in Options, in the loaded AWS config, nor
	// from the EC2 instance metadata service.
	ErrNoRegion = errors.New("lambdainvoke: no region (set Options.Region or AWS_REGION)")
)
