package concurrent

import (
	"errors"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// How an invocation ends, in two steps around its answer (answer.go).
// Before it, finish ends the handler's side: the work started with Go is
// waited for, the handler's metrics are written, the profiler labels come
// off the slot's goroutine (labels.go) and the context ends. So the answer
// counts the work's failures, and a goroutine still carrying the labels
// afterwards outlived its invocation (leftover.go). After it, end is the
// one place every invocation handed out with a request ID ends: its report
// line (LMIGO_REPORT) and its counts.

// The report line's message and outcomes: names read outside the runtime.
const (
	msgReport      = "invocation report"
	outcomeOK      = "ok"
	outcomeError   = "error"
	outcomePanic   = "panic"
	outcomeTimeout = "timeout"
	outcomeOverrun = "overrun"
	// errTypeTimedOut is what the platform answers an invocation whose
	// deadline passed: the caller's error type for timeout and overrun.
	errTypeTimedOut = "Sandbox.Timedout"
)

// outcome is what the answer of a slot's invocation was (answer.go notes
// it), for its report line.
type outcome struct {
	began     int64  // hand-out on the monotonic clock (mono); 0 unless reported
	errorType string // the error answered; "" for a response
	panicked  bool   // that error is a panic of the handler or its work
	bytes     int    // the answer's body, or what was streamed of it
}

// finish ends the handler's side of invocation c, whose handler returned
// err (finishWork), then c itself. It returns the error the invocation
// fails with.
func (s *slot) finish(c *invocationContext, err error) error {
	err = s.finishWork(c, err)
	c.cancel()
	return err
}

// finishWork waits for c's work and writes its metrics (Runtime.finish),
// once: a streamed reader's end may have done so. Then the slot's
// goroutine leaves c's labels, before the answer is posted: a goroutine
// that carries them from here on outlived the invocation.
func (s *slot) finishWork(c *invocationContext, err error) error {
	if !s.finished {
		s.finished = true
		err = s.rt.finish(c, err)
	}
	s.unlabel()
	return err
}

// finish ends what the invocation ctx started beside its handler, which
// returned err: it waits for its work, then writes its metrics (and the
// process's ColdStart, once). It returns the error the invocation fails
// with: err, else the work's first panic, else the first error of the work
// that Wait did not return. A second call does nothing.
func (rt *Runtime) finish(c *invocationContext, err error) error {
	c.mu.Lock()
	x := c.ext
	if x == nil {
		c.ext = endedExt
	}
	c.mu.Unlock()
	if x != nil && x != endedExt {
		err = rt.finishExt(c, x, err)
	}
	if x != endedExt && rt.emf.TakeColdStart() {
		if werr := rt.emf.WriteColdStart(c.lc.AwsRequestID, time.Now()); werr != nil {
			c.zapLogger().Warn("cannot write the ColdStart metric", zap.Error(werr))
		}
	}
	return err
}

func (rt *Runtime) finishExt(c *invocationContext, x *invocationExt, err error) error {
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		return err
	}
	x.waitLocked()
	x.ended = true
	pe, werr, set := x.panic, x.err, x.metrics
	x.mu.Unlock()
	if set != nil {
		if ferr := set.Flush(c.lc.AwsRequestID, time.Now()); ferr != nil {
			c.zapLogger().Warn("cannot write the invocation's metrics", zap.Error(ferr))
		}
	}
	switch {
	case err != nil:
		if pe != nil && !errors.Is(err, pe) {
			logWorkPanic(c.zapLogger(), "fan-out work panicked", pe)
		}
	case pe != nil:
		err = pe
	case werr != nil:
		err = werr
	}
	return err
}

// begin starts the invocation in s: it is counted in flight, its outcome
// is reset, and it is timed when it is to be reported.
func (s *slot) begin() {
	s.result = outcome{}
	if s.rt.cfg.Report {
		s.result.began = mono(time.Now())
	}
	s.countIn()
}

// end ends the invocation in s once it has been answered: its report line,
// then its counts. An invocation the overrun watch replaced was counted
// out then (decide, overrun.go).
func (s *slot) end() {
	if s.rt.cfg.Report {
		s.report()
	}
	s.live.Store(nil)
	if s.endWatch() {
		s.countOut()
	}
}

// report writes the report line of the invocation in s, in Lambda's JSON
// shape with the invocation's IDs. An answer sent past the deadline
// (Lambda-Runtime-Deadline-Ms, by this clock) was a timeout for the
// caller, whatever the handler returned; one the overrun watch would take
// (past the deadline by LMIGO_OVERRUN_GRACE, on its clock) an overrun.
func (s *slot) report() {
	rt := s.rt
	ce := rt.log.Check(zapcore.InfoLevel, msgReport)
	if ce == nil {
		return
	}
	t := time.Now()
	now := mono(t)
	r := s.result
	kind, errorType := outcomeOK, r.errorType
	switch {
	case now >= s.deadline+rt.cfg.OverrunGrace.Nanoseconds():
		kind, errorType = outcomeOverrun, errTypeTimedOut
	case !s.inv.Deadline.IsZero() && !t.Before(s.inv.Deadline):
		kind, errorType = outcomeTimeout, errTypeTimedOut
	case r.panicked:
		kind = outcomePanic
	case r.errorType != "":
		kind = outcomeError
	}
	fields := make([]zap.Field, 0, 8)
	fields = appendInvocationFields(fields, s.inv.RequestID, s.inv.TraceID, s.inv.TenantID)
	fields = append(fields, zap.Float64("durationMs", float64((now-r.began)/1e3)/1e3), zap.String("outcome", kind))
	if kind != outcomeOK {
		fields = append(fields, zap.String("errorType", errorType))
	}
	ce.Write(append(fields, zap.Int("responseBytes", r.bytes))...)
}
