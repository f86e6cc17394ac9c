package rapitest

import "sync/atomic"

// Stats is a snapshot of the server's accounting. Counters only grow;
// PendingPolls and Outstanding are gauges.
type Stats struct {
	Polls       int64 // GET /next received (faulted ones excluded)
	Invocations int64 // invocations handed out on a /next

	// How invocations ended; each ends in exactly one of these (see Ended):
	// the first four by the runtime's post (see Answered), the rest without.
	Responses int64 // /response accepted (202)
	Errors    int64 // /error, or /response ending in error trailers, accepted (202); bad response mode (400)
	Oversized int64 // /response above MaxResponseBytes (413)
	Truncated int64 // /response or /error body could not be read (400)
	Timeouts  int64 // deadline passed first
	Canceled  int64 // Invoke's context was done first
	Aborted   int64 // Close came first

	Throttles  int64 // Invoke refused with ErrThrottled (Runtime.Unavailable)
	InitErrors int64 // /runtime/init/error accepted

	// The Extensions API (internal extensions only).
	Extensions     int64 // extensions registered (200)
	ExtensionPolls int64 // extension event/next calls held open (the extension is ready)
	ExtRefused     int64 // registrations or event polls refused (403), late ones included

	// Replies to the runtime that are not 202.
	Late        int64 // 410: post for an invocation that timed out
	TooLarge    int64 // 413: response, error or init error body too large
	BadRequests int64 // 400: all of them, Unknown and Duplicates included
	Unknown     int64 // 400: request ID this server never handed out
	Duplicates  int64 // 400: invocation already answered
	Faults      int64 // faults injected (Options.Faults, Request.Fault, Request.PostFault)

	// The Lambda-Runtime-Invocation-Id echo on posts for an invocation that
	// was handed out with one.
	CrossWired int64 // 410: the echo named another invocation; it stays open
	NoEcho     int64 // posts without the echo (accepted, as by the emulator)

	NewConns   int64 // TCP connections accepted
	IdleClosed int64 // connections closed after Options.IdleTimeout idle

	PendingPolls   int64 // /next waiting for an invocation now
	Outstanding    int64 // pending /next + invocations held by the runtime now
	MaxPolls       int64 // high-water mark of PendingPolls
	MaxOutstanding int64 // high-water mark of Outstanding
	Violations     int64 // /next that brought Outstanding above MaxConcurrency
}

// Answered is the number of invocations that the runtime's post ended:
// Responses, Errors, Oversized and Truncated. An invocation that timed out,
// or whose caller or server went first, is not answered, even if a post
// came later (Late). A test that the runtime answered every invocation
// exactly once compares Answered, not Ended, with Invocations.
func (s Stats) Answered() int64 {
	return s.Responses + s.Errors + s.Oversized + s.Truncated
}

// Ended is Answered plus Timeouts, Canceled and Aborted. Once every Invoke
// has returned it equals Invocations whatever the runtime did: it shows the
// accounting whole, not that the runtime answered.
func (s Stats) Ended() int64 {
	return s.Answered() + s.Timeouts + s.Canceled + s.Aborted
}

// counters are the live values behind Stats.
type counters struct {
	calls atomic.Int64 // every request, for Options.Faults

	polls, invocations                                                   atomic.Int64
	responses, errors, oversized, truncated, timeouts, canceled, aborted atomic.Int64
	throttles, initErrors                                                atomic.Int64
	extensions, extPolls, extRefused                                     atomic.Int64
	late, tooLarge, badRequests, unknown, duplicates, faults             atomic.Int64
	crossWired, noEcho                                                   atomic.Int64
	newConns, idleClosed                                                 atomic.Int64

	pending, outstanding       atomic.Int64
	maxPending, maxOutstanding atomic.Int64
	violations                 atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Polls:          c.polls.Load(),
		Invocations:    c.invocations.Load(),
		Responses:      c.responses.Load(),
		Errors:         c.errors.Load(),
		Oversized:      c.oversized.Load(),
		Truncated:      c.truncated.Load(),
		Timeouts:       c.timeouts.Load(),
		Canceled:       c.canceled.Load(),
		Aborted:        c.aborted.Load(),
		Throttles:      c.throttles.Load(),
		InitErrors:     c.initErrors.Load(),
		Extensions:     c.extensions.Load(),
		ExtensionPolls: c.extPolls.Load(),
		ExtRefused:     c.extRefused.Load(),
		Late:           c.late.Load(),
		TooLarge:       c.tooLarge.Load(),
		BadRequests:    c.badRequests.Load(),
		Unknown:        c.unknown.Load(),
		Duplicates:     c.duplicates.Load(),
		Faults:         c.faults.Load(),
		CrossWired:     c.crossWired.Load(),
		NoEcho:         c.noEcho.Load(),
		NewConns:       c.newConns.Load(),
		IdleClosed:     c.idleClosed.Load(),
		PendingPolls:   c.pending.Load(),
		Outstanding:    c.outstanding.Load(),
		MaxPolls:       c.maxPending.Load(),
		MaxOutstanding: c.maxOutstanding.Load(),
		Violations:     c.violations.Load(),
	}
}

// raiseTo lifts m to v if v is higher.
func raiseTo(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}
