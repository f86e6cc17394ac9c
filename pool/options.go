package pool

// Option configures Workers.
type Option func(*options)

type options struct {
	onPanic func(any)
}

// WithPanicHandler sets the function told of a panic that escaped a task.
// It runs on the task's goroutine while the panic is being recovered, so
// runtime/debug.Stack called inside it shows where the panic happened. It
// must not panic itself.
//
// Without it the value and the stack are written to standard error: a
// panic never ends the process.
func WithPanicHandler(f func(recovered any)) Option {
	return func(o *options) { o.onPanic = f }
}
