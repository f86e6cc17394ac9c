// Package testhook is how concurrent/lambdatest reaches what package
// concurrent keeps unexported: where a runtime's output goes, and values
// carried in a concurrent.Option. Being internal, it adds nothing to the
// runtime's public API. Package concurrent sets the functions when it is
// initialised; each returns or takes concurrent.Option values as any,
// since this package cannot import concurrent.
package testhook

import "io"

var (
	// Output returns a concurrent.Option that sends the runtime's log
	// lines to logs and its EMF documents to metrics, in place of stderr
	// and stdout.
	Output func(logs, metrics io.Writer) any
	// Carry returns a concurrent.Option that changes nothing in the
	// runtime and carries v, for Read to return.
	Carry func(v any) any
	// Read applies opts, a []concurrent.Option, and returns the values
	// they carry, in order, and the environment lookup they set
	// (os.LookupEnv unless one sets another).
	Read func(opts any) (carried []any, lookup func(string) (string, bool))
	// Refused returns the error of a concurrent.NewHandler that could not
	// be built (New refuses it with that error), or nil.
	Refused func(h any) error
)
