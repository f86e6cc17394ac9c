package concurrent

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/concurrent/internal/errordoc"
	"github.com/lmigo/lmigo/rapi"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// How an invocation ends. Every invocation the Runtime API hands out (its
// request ID read from /next) is answered exactly once, and only through
// this file. The slot's methods respond (a buffered response), fail and
// failWith (an error), and stream (stream.go). Each ends in settle, which
// marks the slot ended. A stream that runtime.Goexit cut after its first
// byte is marked there. serve's guard answers an invocation that left
// serve unended (runtime.Goexit in the handler). An answer that cannot be sent
// for a reason on the runtime's side is replaced here, never dropped:
//
//   - an error type that no header can carry (a control byte, over
//     maxErrorTypeHeader bytes) goes in Lambda-Runtime-Function-Error-Type
//     as invalidErrorType; the body keeps it (JSON escapes anything);
//   - an error document over maxErrorBody, the most the Runtime API reads
//     of an /error, is cut to fit: stack trace first, then the message;
//   - a response content type that no header can carry is sent as
//     application/octet-stream, with a warning;
//   - any answer rapi still refuses to write (rapi.ErrInvalid, nothing
//     sent) is replaced by an error of type errTypeUnsendable.
//
// Every answer echoes the invocation's Lambda-Runtime-Invocation-Id (rapi),
// so that the Runtime API refuses one that reached the wrong invocation.
// Answers are posted with context.Background while the runtime runs and,
// once shutdown began, with a context that ends with the shutdown budget.
//
// An answer whose connection ends before the Runtime API's reply is posted
// once more on a fresh connection: the Runtime API may have lost it. send
// does so, or rapi itself for a reply left to the next poll. If it had
// taken the first post, it refuses the second (400, or 410 once the
// invocation is over), which is logged at INFO, not as a refusal. A stream
// cannot be read twice: its invocation gets an /error of type
// errTypeStreamInterrupted instead (stream.go).

// What the log says of an answer whose reply is not a plain success.
const (
	msgRefused      = "the Runtime API did not accept the answer"
	msgRefusedAgain = "the answer was posted again after its connection ended, and refused: " +
		"the Runtime API had it already, or the invocation was over"
	msgUnconfirmed = "the answer was sent, but the Runtime API had not confirmed it when the runtime stopped"
	msgNoReply     = "the Runtime API had not replied to the answer by the invocation's deadline " +
		"and LMIGO_OVERRUN_GRACE, nor within the stall timeout of the post: its connection was cut, and the slot polls anew"
)

const (
	// maxErrorTypeHeader bounds the error type header, as rapi bounds the
	// one of a stream's trailer.
	maxErrorTypeHeader = 256
	// maxErrorBody is what the Runtime API reads of an /error body (the
	// emulator's requestBodyLimitBytes, 1 MiB); a larger one is refused
	// with 413 and the invocation is left open.
	maxErrorBody = 1 << 20
	// maxContentType bounds a response's content type.
	maxContentType = 1 << 10
)

// respond ends s with body as its response. body is read until the
// Runtime API has accepted it (until the slot's next poll has read its
// reply), as it may be sent again.
func (s *slot) respond(body []byte, contentType string) {
	contentType = s.cleanContentType(contentType)
	again, err := s.send(func(ctx context.Context) error {
		return s.conn.Respond(ctx, &s.inv, body, contentType, s.mayQueue())
	})
	if errors.Is(err, rapi.ErrInvalid) {
		s.fail(errTypeUnsendable, fmt.Errorf("the response could not be sent: %w", err))
		return
	}
	s.note("", nil, len(body))
	s.settle(err, again)
}

// failWith ends s with err, the handler's error or panic, as aws-lambda-go
// reports it.
func (s *slot) failWith(err error) {
	rt := s.rt
	s.resp.Reset()
	errorType := writeErrorDoc(s.resp, err, maxErrorBody)
	rt.metrics.failed(err)
	logFailure(rt.log, &s.inv, errorType, err)
	s.note(errorType, err, 0)
	s.postError(errorType)
}

// fail ends s with an error the runtime itself detected.
func (s *slot) fail(errorType string, err error) {
	rt := s.rt
	if s.resp == nil {
		s.resp = s.bufs.Get()
	}
	s.resp.Reset()
	writeErrorDoc(s.resp, messages.InvokeResponse_Error{Message: err.Error(), Type: errorType}, maxErrorBody)
	rt.metrics.failed(nil)
	logFailure(rt.log, &s.inv, errorType, err)
	s.note(errorType, nil, 0)
	s.postError(errorType)
}

// note records what the answer of s is, for its report line (end.go):
// errorType ("" for a response), the error that caused it, and its size.
func (s *slot) note(errorType string, err error, bytes int) {
	_, panicked := err.(*PanicError) //nolint:errorlint // the handler adapter returns it unwrapped
	s.result.errorType, s.result.panicked, s.result.bytes = errorType, panicked, bytes
}

// postError posts the error document in s.resp, with its X-Ray cause.
func (s *slot) postError(errorType string) {
	errorType = headerErrorType(errorType)
	s.result.bytes = len(s.resp.B)
	doc, cause := withXRayCause(s.resp, &s.inv)
	again, err := s.send(func(ctx context.Context) error {
		return s.conn.Fail(ctx, &s.inv, errorType, doc, cause, s.mayQueue())
	})
	if errors.Is(err, rapi.ErrInvalid) && errorType != errTypeUnsendable {
		s.resp.Reset()
		errordoc.Encode(s.resp, &messages.InvokeResponse_Error{
			Message: "the error could not be sent: " + err.Error(), Type: errTypeUnsendable,
		})
		s.note(errTypeUnsendable, nil, len(s.resp.B))
		doc, cause = withXRayCause(s.resp, &s.inv)
		again, err = s.send(func(ctx context.Context) error {
			return s.conn.Fail(ctx, &s.inv, errTypeUnsendable, doc, cause, s.mayQueue())
		})
	}
	s.settle(err, again)
}

// send posts an answer once, and once more on a fresh connection after a
// transport error (again). If the first one did reach the Runtime API, the
// second gets a harmless 400.
//
// The slot's next /next goes out on the same connection right behind the
// answer (the queue value of each post, from mayQueue). So the Runtime API
// has the poll the moment the caller has its response, and the slot, going
// round, only reads it. That closes the gap in which LMI throttles an
// invoke arriving right after a response, and never holds more polls than
// slots. That poll reads the Runtime API's answer to the post with the
// next invocation (a lazy answer, rapi). Waking up for it here would take
// CPU from the Runtime API just when it registers the poll. A refusal is
// logged from there (lateReply); a 5xx still stops the runtime. rapi keeps
// the answer until then, and sends it again itself if its connection ends
// before the reply.
//
// The reply is due once the body has been delivered. The platform ends the
// invocation by its deadline (a later post gets 410). So a reply whose
// head is still missing past the deadline and the grace means a dead
// connection, which the overrun watch cuts (cutMissingReplies). It also
// waits at least rapi's StallTimeout (10 s) from the post, as for a /next
// answer that stops midway. The second post's reply is bounded alike, from
// that post. A reply may sit unread while this process is starved of
// CPU. A cut then drops the poll queued behind the post, which the Runtime
// API has registered. Under the soak with -race, a grace of 500 ms lost
// invocations so.
//
// A cut is reported with what became of the second post, whatever it was
// (settle). That post queues no poll behind it (mayQueue).
func (s *slot) send(post func(context.Context) error) (again bool, err error) {
	rt := s.rt
	s.cut = false
	s.replyAfter.Store(s.deadline + rt.cfg.OverrunGrace.Nanoseconds())
	ctx := rt.answerCtx()
	err = post(ctx)
	if err == nil || !errors.Is(err, rapi.ErrTransport) {
		return false, err
	}
	s.cut = errors.Is(err, rapi.ErrNoReply)
	second := post(ctx)
	switch {
	case !s.cut:
		return true, second
	case second != nil:
		return true, fmt.Errorf("%w; posted again: %w", err, second)
	}
	return true, fmt.Errorf("%w; posted again: accepted", err)
}

// settle marks s ended and reports what became of its answer (posted
// twice when again is set): nothing more can be done for it.
func (s *slot) settle(err error, again bool) {
	rt := s.rt
	s.ended = true
	s.answered = s.inv.RequestID
	if errors.Is(err, rapi.ErrNoReply) {
		logInvocation(rt.log, zapcore.WarnLevel, &s.inv, msgNoReply, zap.Error(err))
	}
	switch {
	case err == nil:
	case errors.Is(err, rapi.ErrRuntimeAPI):
		rt.stop(err)
	case errors.Is(err, rapi.ErrNoReply):
	default:
		lvl, msg := refusalLine(err, again)
		logInvocation(rt.log, lvl, &s.inv, msg, zap.Error(err))
	}
}

// lateReply reports what the slot's next poll, or the shutdown
// (rapi.Conn.ReadAnswer), read of the reply to answer id, which pipelining
// left to them. A wait that the shutdown ended is not a refusal. The
// answer went out whole, and most likely was accepted.
func (s *slot) lateReply(err error) {
	rt := s.rt
	var ae *rapi.AnswerError
	lvl, msg := zapcore.InfoLevel, msgUnconfirmed
	switch {
	case err == nil:
		return
	case errors.Is(err, rapi.ErrNoReply):
		lvl, msg = zapcore.WarnLevel, msgNoReply
	case !errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
	default:
		lvl, msg = refusalLine(err, ae.Resent)
	}
	if ce := rt.log.Check(lvl, msg); ce != nil {
		ce.Write(zap.String(keyRequestID, s.answered), zap.Error(err))
	}
}

// refusalLine is how a refusal of an answer is logged. After a second
// post (again), a 400 or 410 says that the first one was taken, or that
// the invocation was over anyway: no answer was lost.
func refusalLine(err error, again bool) (zapcore.Level, string) {
	var se *rapi.StatusError
	if again && errors.As(err, &se) && (se.Code == 400 || se.Code == 410) {
		return zapcore.InfoLevel, msgRefusedAgain
	}
	return zapcore.WarnLevel, msgRefused
}

// answerCtx is the context answers are posted with: none to wait for while
// the runtime runs, the shutdown budget once it stops.
func (rt *Runtime) answerCtx() context.Context {
	if rt.stopping.Load() {
		return rt.shutdown
	}
	return context.Background()
}

// stop tells Run to stop with err, a failure of the Runtime API. The
// first one wins.
func (rt *Runtime) stop(err error) {
	select {
	case rt.fatal <- err:
	default:
	}
}

// mayQueue is the queue value of an answer of s, decided right before it is
// posted: whether the slot's next poll goes behind it. Not once the overrun
// watch replaced s (endWatch). Nor once shutdown began: the poll would be
// left registered, and the invocation handed to it lost. Nor while memory
// holds new invocations back (admission.go). Nor after a cut reply (cut):
// the poll queued behind the first post may be registered still.
func (s *slot) mayQueue() bool {
	rt := s.rt
	return s.endWatch() && !s.cut && !rt.stopping.Load() && !rt.holding()
}

// headerErrorType is errorType if a header can carry it, else
// invalidErrorType.
func headerErrorType(errorType string) string {
	if !rapi.ValidHeaderValue(errorType, maxErrorTypeHeader) {
		return invalidErrorType
	}
	return errorType
}

// cleanContentType is contentType if a header can carry it, else
// application/octet-stream (logged).
func (s *slot) cleanContentType(contentType string) string {
	rt := s.rt
	if rapi.ValidHeaderValue(contentType, maxContentType) {
		return contentType
	}
	logInvocation(rt.log, zap.WarnLevel, &s.inv, "the response's content type cannot be sent, "+bytesContentType+" is sent instead",
		zap.String("contentType", errordoc.CutUTF8(contentType, 64)), zap.Int("length", len(contentType)))
	return bytesContentType
}
