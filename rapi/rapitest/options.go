package rapitest

import (
	"fmt"
	"net/http"
	"time"
)

// Defaults of Options.
const (
	// DefaultMaxResponseBytes is the emulator's limit for a buffered
	// response: 6 MiB + 100 B.
	DefaultMaxResponseBytes = 6*1024*1024 + 100
	// DefaultTimeout is Lambda's default function timeout.
	DefaultTimeout = 3 * time.Second
	// DefaultFunctionARN is sent as Lambda-Runtime-Invoked-Function-Arn.
	DefaultFunctionARN = "arn:aws:lambda:us-east-1:123456789012:function:lmigo-fake"
	// MaxErrorBodyBytes bounds /error and /init/error bodies (1 MiB, as on the platform).
	MaxErrorBodyBytes = 1 << 20
)

// What Options.Notice is told about a post.
const (
	NoticeDuplicate  = "duplicate"   // 400: its invocation was answered already
	NoticeUnknown    = "unknown"     // 400: a request ID never handed out
	NoticeLate       = "late"        // 410: its invocation timed out
	NoticeCrossWired = "cross-wired" // 410: its Lambda-Runtime-Invocation-Id named another invocation
	NoticeNoEcho     = "no-echo"     // accepted without the Lambda-Runtime-Invocation-Id echo
)

// Options configure a Server. The zero value is valid: N = 1, the default
// limits, throttling when no /next is pending.
type Options struct {
	// MaxConcurrency is N: more than N pending /next plus invocations held
	// by the runtime is a protocol violation (counted, not refused).
	// 0 means 1.
	MaxConcurrency int
	// MaxResponseBytes caps a /response body; above it the reply is 413.
	// 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int
	// Queue makes Invoke wait (bounded by its context) for a pending /next
	// instead of failing with ErrThrottled.
	Queue bool
	// Timeout is the invocation timeout used when Request.Timeout is 0.
	// 0 means DefaultTimeout.
	Timeout time.Duration
	// FunctionARN is sent on every /next. "" means DefaultFunctionARN.
	FunctionARN string
	// Faults, when set, is asked about every Runtime API request before it is
	// served; call counts requests from 1. A nil Fault serves the request
	// normally; otherwise the Fault replaces its handling. A faulted /next
	// registers no poll and a faulted post ends no invocation, unless the
	// Fault lets the request be served (see Fault). It is called
	// concurrently.
	Faults func(call int, r *http.Request) *Fault
	// Notice, when set, is told the request ID of each post the server
	// refuses or flags on its own (not for an injected fault). It is told
	// why: NoticeDuplicate, NoticeUnknown, NoticeLate, NoticeCrossWired or
	// NoticeNoEcho. A test names with it the invocation a count is about. It
	// is called concurrently.
	Notice func(requestID, what string)
	// Addr is the address to listen on; "" means 127.0.0.1:0, a free port.
	// A fixed port lets a test start a runtime before its Runtime API
	// exists (its connections are refused until then).
	Addr string
	// IdleTimeout, when set, closes a keep-alive connection that has waited
	// that long for its next request ([Stats].IdleClosed). A Runtime API may
	// close one a runtime left idle while a long invocation ran. 0 keeps idle
	// connections open.
	IdleTimeout time.Duration

	// now is the clock that deadlines are set and held to; nil means
	// time.Now. A test sets it to decide what is late without racing a timer.
	now func() time.Time
}

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.MaxConcurrency < 0:
		return o, fmt.Errorf("%w: MaxConcurrency %d < 0", ErrInvalidOptions, o.MaxConcurrency)
	case o.MaxResponseBytes < 0:
		return o, fmt.Errorf("%w: MaxResponseBytes %d < 0", ErrInvalidOptions, o.MaxResponseBytes)
	case o.Timeout < 0:
		return o, fmt.Errorf("%w: Timeout %v < 0", ErrInvalidOptions, o.Timeout)
	case o.IdleTimeout < 0:
		return o, fmt.Errorf("%w: IdleTimeout %v < 0", ErrInvalidOptions, o.IdleTimeout)
	}
	if o.MaxConcurrency == 0 {
		o.MaxConcurrency = 1
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.FunctionARN == "" {
		o.FunctionARN = DefaultFunctionARN
	}
	return o, nil
}
