package concurrent

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/concurrent/internal/errordoc"
	"github.com/lmigo/lmigo/concurrent/internal/logline"
	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// LevelTrace is Lambda's TRACE level, one below zap's Debug, so that
// AWS_LAMBDA_LOG_LEVEL=TRACE has a level of its own. Log at it with [Trace]
// or with (*zap.Logger).Log(LevelTrace, ...).
const LevelTrace = zapcore.DebugLevel - 1

// Trace logs msg at TRACE. A disabled line allocates nothing, fields
// included: zap's own level methods allocate the fields slice even then.
func Trace(l *zap.Logger, msg string, fields ...zap.Field) {
	if ce := l.Check(LevelTrace, msg); ce != nil {
		ce.Write(slices.Clone(fields)...)
	}
}

func zapLevel(l limits.Level) zapcore.Level {
	switch l {
	case limits.LevelTrace:
		return LevelTrace
	case limits.LevelDebug:
		return zapcore.DebugLevel
	case limits.LevelWarn:
		return zapcore.WarnLevel
	case limits.LevelError:
		return zapcore.ErrorLevel
	case limits.LevelFatal:
		return zapcore.FatalLevel
	}
	return zapcore.InfoLevel
}

// lambdaLevelName spells levels as Lambda's JSON log format does. zap's
// DPanic and Panic are errors of one invocation here (a panic ends only
// that invocation), so they are ERROR; FATAL is kept for Fatal, which ends
// the process.
func lambdaLevelName(l zapcore.Level) string {
	switch {
	case l <= LevelTrace:
		return "TRACE"
	case l == zapcore.DebugLevel:
		return "DEBUG"
	case l == zapcore.InfoLevel:
		return "INFO"
	case l == zapcore.WarnLevel:
		return "WARN"
	case l < zapcore.FatalLevel:
		return "ERROR"
	}
	return "FATAL"
}

func encodeLevel(l zapcore.Level, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(lambdaLevelName(l))
}

// timeLayout is RFC 3339 with all nine digits of the nanoseconds, so that
// timestamps have one width and sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// encodeTime goes through zapcore's layout encoder, which appends into the
// line's buffer without an intermediate string.
var encodeTimeLayout = zapcore.TimeEncoderOfLayout(timeLayout)

func encodeTime(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	encodeTimeLayout(t.UTC(), enc)
}

// encodeDuration writes a duration with its unit, in Go's notation
// ("1.5s", "312.5µs"), as the duration variables are written. A bare
// number would leave the reader to guess the unit.
func encodeDuration(d time.Duration, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(d.String())
}

func encoderConfig() zapcore.EncoderConfig {
	return zapcore.EncoderConfig{
		TimeKey:        "timestamp",
		LevelKey:       "level",
		MessageKey:     "message",
		StacktraceKey:  "stackTrace",
		LineEnding:     zapcore.DefaultLineEnding,
		EncodeLevel:    encodeLevel,
		EncodeTime:     encodeTime,
		EncodeDuration: encodeDuration,
	}
}

// newLogger builds a logger in Lambda's shape writing to w. The core
// encodes each record into one buffer and hands it to w in one Write,
// under zapcore.Lock: lines of concurrent invocations never interleave,
// whatever their length. An *os.File adds its own write lock, so lines of
// two loggers on the same file (or of the log package) do not interleave
// either. A line over maxLogLine is cut to fit on its way (logline.Writer),
// outside the lock.
func newLogger(format limits.Format, level limits.Level, w zapcore.WriteSyncer) *zap.Logger {
	var enc zapcore.Encoder
	if format == limits.FormatText {
		enc = zapcore.NewConsoleEncoder(encoderConfig())
	} else {
		enc = zapcore.NewJSONEncoder(encoderConfig())
	}
	out := logline.Writer{W: zapcore.Lock(w), JSON: format != limits.FormatText, Limit: maxLogLine}
	core := zapcore.NewCore(enc, out, zap.NewAtomicLevelAt(zapLevel(level)))
	return zap.New(core)
}

// defaultLogger takes the lines logged outside an invocation, by Logger
// or the slog handler. It writes stderr in the environment's level and
// format. It belongs to the process, not to a Runtime, so it writes to
// os.Stderr itself.
var defaultLogger = sync.OnceValue(func() *zap.Logger {
	c, err := limits.FromEnv(os.LookupEnv)
	if err != nil {
		// New reports the bad variables; lines are not lost meanwhile.
		return newLogger(envLogFormat(os.LookupEnv), limits.LevelInfo, os.Stderr)
	}
	return newLogger(c.LogFormat, c.LogLevel, os.Stderr)
})

// envLogFormat is the log format the environment asks for, read alone by
// limits' rules. Another bad variable must not hide it: the line that
// reports that variable is written in it. When the format variable is
// itself bad, it is the environment's default.
func envLogFormat(lookup func(string) (string, bool)) limits.Format {
	for _, keep := range []string{"AWS_LAMBDA_LOG_FORMAT", ""} {
		c, err := limits.FromEnv(func(k string) (string, bool) {
			switch k {
			case "AWS_LAMBDA_RUNTIME_API":
				return "127.0.0.1:9001", true // required, and not what is read here
			case "AWS_LAMBDA_INITIALIZATION_TYPE", keep:
				return lookup(k)
			}
			return "", false
		})
		if err == nil {
			return c.LogFormat
		}
	}
	return limits.FormatJSON
}

// logStart says once what the runtime runs with, and warns of each
// LMIGO_ variable it does not know: a typo would otherwise go unseen.
func (rt *Runtime) logStart() {
	if rt.opts.environ != nil {
		for _, u := range limits.UnknownVars(rt.opts.environ()) {
			rt.log.Warn("unknown variable ignored",
				zap.String("variable", u.Name), zap.String("nearest", u.Nearest))
		}
	}
	limit := rt.derivedMemoryLimit()
	if limit <= 0 {
		limit = debug.SetMemoryLimit(-1) // -1 only reads it
	}
	if limit == math.MaxInt64 {
		limit = 0 // none
	}
	rt.log.Info("runtime starting",
		zap.Int("slots", rt.cfg.Slots),
		zap.Int("maxConcurrency", rt.cfg.MaxConcurrency),
		zap.Int("bufferRetainBytes", rt.cfg.BufferRetainBytes),
		zap.Int64("memoryLimitBytes", limit),
		zap.Duration("overrunGrace", rt.cfg.OverrunGrace))
}

// Field names of an invocation's IDs in every line logged for it.
const (
	keyRequestID = "requestId"
	keyTraceID   = "traceId"
	keyTenantID  = "tenantId"
)

// appendInvocationFields appends the IDs of an invocation; traceId and
// tenantId only where present.
func appendInvocationFields(fs []zap.Field, requestID, traceHeader, tenantID string) []zap.Field {
	fs = append(fs, zap.String(keyRequestID, requestID))
	if root := traceRoot(traceHeader); root != "" {
		fs = append(fs, zap.String(keyTraceID, root))
	}
	if tenantID != "" {
		fs = append(fs, zap.String(keyTenantID, tenantID))
	}
	return fs
}

// traceRoot returns the Root of an X-Ray trace header
// ("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=...;Sampled=1"), which
// is the trace ID that X-Ray and CloudWatch search by; a header without
// one is returned whole.
func traceRoot(header string) string {
	for rest := header; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ";")
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "Root="); ok {
			return v
		}
	}
	return header
}

// logInvocation writes one of the runtime's own lines about the invocation
// in inv, carrying the same IDs as the lines its handler logs.
func logInvocation(log *zap.Logger, lvl zapcore.Level, inv *rapi.Invocation, msg string, fields ...zap.Field) {
	ce := log.Check(lvl, msg)
	if ce == nil {
		return
	}
	all := make([]zap.Field, 0, 3+len(fields))
	all = appendInvocationFields(all, inv.RequestID, inv.TraceID, inv.TenantID)
	ce.Write(append(all, fields...)...)
}

// logFailure logs an invocation answered with an error: its errorType and
// errorMessage as sent, less the event's values (logMessage). A panic adds
// its stack.
func logFailure(log *zap.Logger, inv *rapi.Invocation, errorType string, err error) {
	msg := "invocation failed"
	fields := []zap.Field{zap.String("errorType", errorType), zap.String("errorMessage", logMessage(err))}
	if pe, ok := err.(*PanicError); ok { //nolint:errorlint // the handler adapter returns it unwrapped
		msg = "invocation panicked"
		fields = append(fields, zap.Array("stackTrace", stackFrames(errordoc.StackTrace(pe.Stack, maxPanicFrames))))
	}
	logInvocation(log, zapcore.ErrorLevel, inv, msg, fields...)
}

// logMessage is err's message as the runtime logs it: errorMessage, less
// any value of the caller's data. encoding/json quotes a value it could
// not store, and an UnmarshalJSON method's error may quote any of the
// event. The error body may carry them back to the caller; the function's
// logs must not. So a failed decode is logged with the field, the Go type
// and the kind of JSON value, or a syntax error's offset, or else the
// error's type alone. encoding/json errors wrapped in another error are
// logged the same way, inside the rest of the message.
func logMessage(err error) string {
	if ee, ok := err.(*eventError); ok { //nolint:errorlint // the handler adapter returns it unwrapped
		if safe, ok := jsonErrorText(ee.err); ok {
			return safe
		}
		return fmt.Sprintf("the event does not decode into %v: %T (its message is not logged: it may quote the event)", ee.into, ee.err)
	}
	msg := errorMessage(err)
	for _, jerr := range jsonErrors(err, nil) {
		safe, _ := jsonErrorText(jerr)
		if quoted := jsonErrorQuote(jerr); quoted != "" && strings.Contains(msg, quoted) {
			msg = strings.ReplaceAll(msg, quoted, safe)
		} else {
			// Its text is not in the message as it is: a message that
			// cannot be redacted is not logged.
			return safe + " (the error's message is not logged: it may quote the caller's data)"
		}
	}
	return msg
}

// jsonErrors appends the encoding/json errors that quote a value found in
// err's tree to errs.
func jsonErrors(err error, errs []error) []error {
	switch e := err.(type) { //nolint:errorlint // walks the tree itself
	case nil:
	case *json.UnmarshalTypeError, *json.SyntaxError:
		errs = append(errs, e)
	case interface{ Unwrap() error }:
		errs = jsonErrors(e.Unwrap(), errs)
	case interface{ Unwrap() []error }:
		for _, u := range e.Unwrap() {
			errs = jsonErrors(u, errs)
		}
	}
	return errs
}

// jsonErrorQuote is the message of an encoding/json error, as it appears
// in the messages of errors that wrap it; "" if Error panics.
func jsonErrorQuote(err error) (msg string) {
	defer func() {
		if recover() != nil {
			msg = ""
		}
	}()
	return err.Error()
}

// jsonKinds are the kinds of JSON value an UnmarshalTypeError's Value
// starts with; anything after them is the value itself.
var jsonKinds = []string{"number", "string", "bool", "array", "object", "null"}

// jsonErrorText is an encoding/json error's message without the value it
// quotes. An UnmarshalTypeError keeps only the kind of value ("json:
// cannot unmarshal number into Go struct field Event.n of type int32"); a
// SyntaxError keeps its offset. ok is false for other errors.
func jsonErrorText(err error) (text string, ok bool) {
	switch e := err.(type) { //nolint:errorlint // the decoder's error itself
	case *json.UnmarshalTypeError:
		kind, _, _ := strings.Cut(e.Value, " ")
		if !slices.Contains(jsonKinds, kind) {
			kind = "value"
		}
		if e.Type == nil {
			return "json: cannot unmarshal " + kind, true
		}
		safe := *e
		safe.Value = kind
		return safe.Error(), true
	case *json.SyntaxError:
		return "json: syntax error at offset " + strconv.FormatInt(e.Offset, 10), true
	}
	return "", false
}

// errorMessage is err's message as the error body reports it. A panic in
// Error is reported rather than passed on.
func errorMessage(err error) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = "panic in Error: " + newPanicError(v).Error()
		}
	}()
	if pe, ok := err.(*PanicError); ok { //nolint:errorlint // see logFailure
		return panicBody(pe).Message
	}
	return err.Error()
}

// stackFrames logs frames as the error body holds them.
type stackFrames []*messages.InvokeResponse_Error_StackFrame

func (fs stackFrames) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for _, f := range fs {
		_ = enc.AppendObject(logFrame(*f))
	}
	return nil
}

type logFrame messages.InvokeResponse_Error_StackFrame

func (f logFrame) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("path", f.Path)
	enc.AddInt32("line", f.Line)
	enc.AddString("label", f.Label)
	return nil
}

// maxLogLine bounds every line the runtime's logger writes
// (logline.MaxLine).
const maxLogLine = logline.MaxLine
