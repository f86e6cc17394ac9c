// Package pool holds the two reusable resources of the runtime: goroutines
// (Workers) and byte buffers (Buffers). It knows nothing about Lambda.
//
// # Workers
//
// Workers[T] runs fn(arg) on a bounded set of resident goroutines. At most
// size calls of fn run at once; that bound is enforced by Workers itself,
// not by timing.
//
// Invoke never waits for a task to end: when size tasks are running it
// returns ErrFull at once. The intended caller reserves one of size slots
// before it hands a task over and frees that slot from the WithDone hook,
// which runs after fn has returned and the task no longer counts; such a
// caller never sees ErrFull. A slot freed from inside fn instead races with the task's
// own end and can see ErrFull. Goroutines are bounded too, to 2*size: a
// worker whose task has ended needs a moment to park again, and Invoke
// yields the processor to it in the rare case it is still on its way.
//
// Invoke allocates nothing: the argument travels to a parked goroutine over
// a channel (ants' generic pool-with-func), where a closure per task would
// cost one allocation.
//
// A panic that escapes fn ends only that task: the worker goroutine is
// replaced, the slot is still freed (WithDone runs), and the value goes to
// standard error.
//
// The pool's goroutines, ants' own among them, start with the first Invoke:
// a Workers that is never invoked holds none and may simply be dropped.
// Release closes the pool and waits up to its timeout for running tasks and
// every goroutine of the pool to end. It may be called any number of times,
// from any goroutine; each call waits again. Invoke after Release returns
// an error.
//
// # Buffers
//
// Buffers is a small free list of *bytebufferpool.ByteBuffer for one worker
// (typically two buffers: request and response), with a hard cap on the
// bytes it keeps. Get hands over ownership of a buffer; Put takes it back.
// After Put the caller must not touch the buffer or any slice taken from
// buf.B: it may be reset and given to the next Get. A buffer whose capacity
// would push the retained total above the cap is dropped for the garbage
// collector, so after a 6 MiB response the worker keeps no more than the
// cap. Buffers is safe for concurrent use; Retained may be read by a
// metrics goroutine while a worker uses the buffers.
package pool
