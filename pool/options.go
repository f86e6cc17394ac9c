package pool

// Option configures Workers.
type Option func(*options)

type options struct {
	onPanic  func(any)
	done     any  // func(T) of the pool it is given to; checked by NewWorkers
	preAlloc bool // benchmarks only
}

// WithPanicHandler sets the function told of a panic that escaped a task.
// It runs on the worker goroutine while the panic is being recovered, so
// runtime/debug.Stack called inside it shows where the panic happened. It
// must not panic itself.
//
// Without it the value and the stack are written to standard error: a
// panic never ends the process.
func withPanicHandler(f func(recovered any)) Option {
	return func(o *options) { o.onPanic = f }
}

// WithDone sets a hook called with each task's argument after fn has
// returned (or panicked) and the task has stopped counting towards size.
// This is the place to free the caller's slot: a slot freed there is
// always usable by the next Invoke. T must be the type of the Workers it
// is given to, otherwise NewWorkers returns ErrInvalid.
func WithDone[T any](f func(T)) Option {
	return func(o *options) {
		if f == nil {
			o.done = nil
			return
		}
		o.done = f
	}
}
