// Package oteltrace traces the invocations of a handler served by lmigo
// with OpenTelemetry, joining the trace Lambda started for each invocation.
// It is a module of its own, so that the runtime's module does not require
// OpenTelemetry.
package oteltrace
