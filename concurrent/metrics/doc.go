// Package metrics records a handler's own CloudWatch metrics in its
// invocation, written as Embedded Metric Format (EMF) documents when the
// invocation ends: the values, dimensions and metadata of invocations
// served at once never meet.
//
//	metrics.AddDimension(ctx, "Operation", "checkout")
//	metrics.Add(ctx, "Orders", metrics.Count, 1)
//	metrics.AddHighResolution(ctx, "Latency", metrics.Milliseconds, ms)
//	metrics.AddMetadata(ctx, "orderId", id)
//
// The namespace is POWERTOOLS_METRICS_NAMESPACE, as Powertools for AWS
// Lambda reads it; unset, every call returns ErrNoNamespace and nothing is
// written. POWERTOOLS_SERVICE_NAME, when set, is a dimension "service" of
// every metric unless the handler sets that dimension itself.
// POWERTOOLS_METRICS_DISABLED=true (as Powertools reads it) keeps the
// calls and their checks, namespace or not, and writes nothing, ColdStart
// included: metrics off in a test or a stage, with the same code.
//
// When the handler has returned, and the work it started with
// concurrent.Go has too, the runtime writes the invocation's metrics on
// stdout, before its answer is posted: the documents are in the log
// before the caller has the response, and count what its work recorded.
// Each document is one line of at most 32 KiB, written in one write, and
// carries the invocation's requestId, its dimensions and its metadata; a
// metric added several times has its values in an array. EMF's limits are
// kept by writing several documents: at most 100 metrics each, 100 values
// of a metric each, and what fits in the line. The first invocation of the
// process to end also writes ColdStart (1, Count) in a document of its
// own, with the dimensions function_name and service, as Powertools does.
// An invocation that records nothing writes nothing and allocates nothing.
//
// A call records nothing and returns an error for what cannot be written:
// a name of 0 or over 255 bytes, a unit not in CloudWatch's list, a NaN or
// infinite value, a dimension past 30 ([ErrTooManyDimensions]), a key that
// another member of the document already has ([ErrInvalid]). Outside an
// lmigo invocation (a plain context, a test calling the handler), every
// call returns [ErrNoInvocation] and records nothing; once the invocation
// has ended (a goroutine it left behind), [ErrInvocationEnded]. The calls
// are safe for concurrent use by the goroutines of one invocation.
package metrics
