package concurrent

import (
	"os"
	"time"

	"github.com/lmigo/lmigo/limits"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// levelTrace sits below zap's Debug so that AWS_LAMBDA_LOG_LEVEL=TRACE has
// a level of its own.
const levelTrace = zapcore.DebugLevel - 1

func zapLevel(l limits.Level) zapcore.Level {
	switch l {
	case limits.LevelTrace:
		return levelTrace
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

// lambdaLevelName spells levels as Lambda's JSON log format does.
func lambdaLevelName(l zapcore.Level) string {
	switch {
	case l <= levelTrace:
		return "TRACE"
	case l == zapcore.DebugLevel:
		return "DEBUG"
	case l == zapcore.InfoLevel:
		return "INFO"
	case l == zapcore.WarnLevel:
		return "WARN"
	case l == zapcore.ErrorLevel:
		return "ERROR"
	}
	return "FATAL"
}

func encodeLevel(l zapcore.Level, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(lambdaLevelName(l))
}

func encodeTime(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(t.UTC().Format(time.RFC3339Nano))
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
		EncodeDuration: zapcore.MillisDurationEncoder,
	}
}

// newLogger builds the runtime's logger. zapcore.Lock makes each record a
// single locked write, so lines of concurrent invocations never interleave.
func newLogger(format limits.Format, level limits.Level, w zapcore.WriteSyncer) *zap.Logger {
	var enc zapcore.Encoder
	if format == limits.FormatText {
		enc = zapcore.NewConsoleEncoder(encoderConfig())
	} else {
		enc = zapcore.NewJSONEncoder(encoderConfig())
	}
	core := zapcore.NewCore(enc, zapcore.Lock(w), zap.NewAtomicLevelAt(zapLevel(level)))
	return zap.New(core)
}

// stderr is where the runtime logs by default; a variable so tests can
// capture it.
var stderr zapcore.WriteSyncer = os.Stderr
