// Package limits turns the process environment into one validated Config:
// every variable the runtime reads is parsed, defaulted and checked here,
// and nowhere else.
//
// # Contract
//
// FromEnv is a pure function. It never reads the process environment
// itself (callers pass os.LookupEnv, tests pass a map), keeps no state,
// starts no goroutine and runs no init(). It does not block.
//
// It checks every variable and reports every problem at once, joined with
// errors.Join in the order of Vars. Each problem is a *VarError that names
// the variable and the value it got and wraps ErrInvalid, so callers can
// test errors.Is(err, ErrInvalid) or pick the details with errors.As.
// On error the returned Config is the zero Config and must not be used.
//
// UnknownVars is pure too: it takes os.Environ's list and names each
// LMIGO_ variable FromEnv does not read, so that a typo is seen.
//
// On success the Config satisfies
//
//	1 <= Slots <= MaxConcurrency <= 1600
//	0 <= BufferRetainBytes <= 64 MiB
//	1 <= MaxRequestBytes, MaxResponseBytes <= 6 MiB + 100 B
//	MemoryMB == 0 (unset) or 1 <= MemoryMB <= 1048576
//	MemoryLimitFraction == 0 (off) or 0.1 <= MemoryLimitFraction <= 1
//	0 < ShutdownTimeout <= 10s
//	0 < OverrunGrace <= 1h
//	0 <= MaxOverruns <= 16000
//	WedgedExit == 0 (never) or 0 < WedgedExit <= 1h
//	1s <= MetricsInterval <= 1h
//
// # Parsing rules
//
// Surrounding spaces are trimmed from every value, and a value that is
// empty after trimming counts as unset.
//
// AWS_LAMBDA_MAX_CONCURRENCY follows the platform contract: unset, empty or
// an integer below 1 means 1. A value that is not an integer, or is above
// 1600, is an error rather than a silent 1: the platform never sets one, so
// it can only be a mistake worth seeing at start-up.
//
// LMIGO_SLOTS defaults to N and may only lower it: the runtime holds one
// /next poll per slot, and it must never hold more polls than N. Its old
// name, LMIGO_WORKERS, is still read: set alone it counts as LMIGO_SLOTS,
// and set with it, it must give the same count.
//
// Sizes are plain byte counts or a count with one of the suffixes KiB, MiB
// (powers of 1024) or KB, MB (powers of 1000), case-insensitive, with an
// optional space before the suffix ("64KiB", "1 MiB"). The request and
// response caps are bounded by 6 MiB + 100 B, the largest buffered payload
// the Runtime API accepts, and must be at least 1 B: a cap of 0 would fail
// every invocation, and a user who writes 0 most likely means "no limit",
// which the platform does not offer. The retain cap may be 0 (keep no buffer
// between invocations) and is bounded by 64 MiB.
//
// LMIGO_MEMORY_LIMIT_FRACTION is the share of AWS_LAMBDA_FUNCTION_MEMORY_SIZE
// the runtime sets as the Go runtime's soft memory limit
// (debug.SetMemoryLimit) when GOMEMLIMIT is not set. It is written as a
// plain decimal (0.9, .85, 1): no sign, exponent or percent. The default,
// 0.9, leaves a tenth of the function's memory for what the limit does not
// count (the binary's text and data, memory outside Go, the kernel's socket
// buffers) and for the overshoot of a soft limit; below 0.1 the GC would run
// nearly all the time. 0 or off sets no limit. GOMEMLIMIT itself is read by
// the Go runtime at start; FromEnv only records that it is set
// (Config.GOMEMLIMITSet, even to an empty value or "off"), so that the
// user's choice always wins.
//
// AWS_LAMBDA_LOG_FORMAT defaults to JSON on Lambda Managed Instances, where
// the platform always uses JSON, and to TEXT elsewhere, as on-demand Lambda
// does. A value that is set is always honoured.
//
// LMIGO_OVERRUN_GRACE, LMIGO_MAX_OVERRUNS and LMIGO_WEDGED_EXIT bound what
// a handler that ignores its deadline may cost: its slot is replaced once
// it has run the grace past its deadline, at most LMIGO_MAX_OVERRUNS slots
// at once (by default as many as there are slots), and an environment where
// no slot can serve any more ends itself after LMIGO_WEDGED_EXIT (0 or off:
// never).
//
// LMIGO_METRICS is off (the default) or emf. LMIGO_METRICS_INTERVAL is
// checked even when metrics are off, so that a typo shows before someone
// turns them on; a second is CloudWatch's finest resolution, and an hour
// bounds how much a crash can lose.
//
// LMIGO_SIGTERM and LMIGO_REPORT are switches: 1, true or on turn them on;
// 0, false or off (and unset) leave them off; anything else is an error
// rather than a guess. LMIGO_LABELS is the same switch, on when unset.
//
// LMIGO_JSON_CODEC is std, jsonv2, goccy, sonic or segmentio, any case, or
// unset; the runtime then checks that the bootstrap links the codec named.
//
// The plain strings (function name and version, log group and stream,
// region, handler) are taken as they are, trimmed, and never fail.
package limits
