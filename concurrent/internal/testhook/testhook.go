// Package testhook is how concurrent/lambdatest reaches what package
// concurrent keeps unexported: where a runtime's output goes, how it
// exits, and the environment lookup its options set. Being internal, it
// adds nothing to the runtime's public API. Package concurrent sets the
// functions when it is initialised; each returns or takes
// concurrent.Option values as any, since this package cannot import
// concurrent.
package testhook

import "io"

var (
	// Replace returns a concurrent.Option that puts p in place of the
	// process's side effects.
	Replace func(p Process) any
	// Lookup applies opts, a []concurrent.Option, and returns the
	// environment lookup they set (os.LookupEnv unless one sets another),
	// and the names it can list (os.Environ; nil when one sets a lookup).
	Lookup func(opts any) (lookup func(string) (string, bool), environ func() []string)
	// Refused returns the error of a concurrent.NewHandler that could not
	// be built (New refuses it with that error), or nil.
	Refused func(h any) error
)

// Process is what a runtime under test does in place of touching the
// process.
type Process struct {
	// Logs and Metrics take the log lines and the EMF documents, in place
	// of stderr and stdout. Own, when set, takes the runtime's own log
	// lines apart from the handler's (a logger given to the runtime keeps
	// them together).
	Logs, Metrics, Own io.Writer
	// Exit is called where the runtime would end the process (the wedged
	// exit), and returns.
	Exit func(code int)
	// Environ lists the names the runtime warns of when it does not know
	// them (LMIGO_ typos); nil: none.
	Environ func() []string
}
