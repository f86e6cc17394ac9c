// Package pool holds the two reusable resources of the runtime: goroutines
// (Workers) and byte buffers (Buffers). It knows nothing about Lambda.
//
// # Workers
//
// Workers[T] runs long-lived tasks, fn(arg) each on a goroutine of its own,
// at most size at once: the runtime runs each of its slots as one task, a
// loop for the life of the process, so nothing on an invocation's way
// touches the pool. Invoke never waits: when size tasks run it returns an
// error at once. A task that ends leaves its goroutine parked for the next
// Invoke.
//
// A task that ends without returning is started again with the same
// argument, on a fresh goroutine, at once: a panic (reported to the
// WithPanicHandler function, by default to standard error, never ending the
// process) or runtime.Goexit costs the task its goroutine, not its place.
// The goroutine it leaves still counts for the moment it takes to exit, and
// the pool makes room for it for that moment only.
//
// NewWorkers starts the pool's clock goroutine. Release closes the pool and
// waits up to its timeout for running tasks and every goroutine of the pool
// to end. It may be called any number of times, from any goroutine; each
// call waits again. Invoke after Release returns an error.
//
// # Buffers
//
// Buffers is a small free list of *bytebufferpool.ByteBuffer for one slot
// (typically two buffers: request and response), with a hard cap on the
// bytes it keeps. Get hands over ownership of a buffer; Put takes it back.
// After Put the caller must not touch the buffer or any slice taken from
// buf.B: it may be reset and given to the next Get. A buffer whose capacity
// would push the retained total above the cap is dropped for the garbage
// collector, so after a 6 MiB response the slot keeps no more than the
// cap. Buffers is safe for concurrent use; Retained may be read by a
// metrics goroutine while the slot uses the buffers.
package pool
