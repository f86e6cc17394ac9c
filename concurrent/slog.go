package concurrent

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Levels for Lambda's TRACE and FATAL, which log/slog does not name. A slog
// level below slog.LevelDebug is written as TRACE, one at or above
// SlogLevelFatal as FATAL; logging at FATAL does not end the process.
const (
	SlogLevelTrace = slog.LevelDebug - 4
	SlogLevelFatal = slog.LevelError + 4
)

// SlogHandler returns a log/slog handler that writes through [Logger]'s
// logger, in the same shape, with the IDs of the invocation the call's
// context belongs to:
//
//	slog.SetDefault(slog.New(concurrent.SlogHandler()))
//	slog.InfoContext(ctx, "order stored", "orderId", id) // carries ctx's requestId
//
// A call without an invocation's context is written without IDs; [Slog]
// gives a logger bound to one invocation. One handler serves them all.
func SlogHandler() slog.Handler { return &slogHandler{} }

// Slog returns a *slog.Logger bound to the invocation ctx belongs to: its
// lines carry that invocation's IDs whatever context they are logged with.
// It is built on the first call of each invocation and cached. Outside an
// invocation it returns a logger on [SlogHandler].
func Slog(ctx context.Context) *slog.Logger {
	c := fromContext(ctx)
	if c == nil {
		return defaultSlog
	}
	return c.slog()
}

var defaultSlog = slog.New(SlogHandler())

// slogHandler turns slog records into zap entries of the invocation's
// logger. Attributes given to WithAttrs are converted once; groups opened
// by WithGroup are written only once an attribute lands in them, as slog
// asks of handlers.
type slogHandler struct {
	inv    *invocationContext // bound by Slog; nil: the invocation of each call's context
	fields []zap.Field        // from WithAttrs, with zap.Namespace for their groups
	groups []string           // opened since, still empty
}

func (h *slogHandler) invocation(ctx context.Context) *invocationContext {
	if h.inv != nil {
		return h.inv
	}
	if ctx == nil {
		return nil
	}
	return fromContext(ctx)
}

func (h *slogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	lvl := zapLevelOfSlog(l)
	if c := h.invocation(ctx); c != nil {
		return c.base.Core().Enabled(lvl)
	}
	return defaultLogger().Core().Enabled(lvl)
}

// fieldsPool keeps the field slices of Handle: a record's attributes are
// converted into one of them, written, and the slice is given back.
var fieldsPool = sync.Pool{New: func() any { s := make([]zap.Field, 0, 16); return &s }}

func (h *slogHandler) Handle(ctx context.Context, r slog.Record) error {
	var core zapcore.Core
	if c := h.invocation(ctx); c != nil {
		core = c.zapLogger().Core()
	} else {
		core = defaultLogger().Core()
	}
	ce := core.Check(zapcore.Entry{Level: zapLevelOfSlog(r.Level), Time: r.Time, Message: r.Message}, nil)
	if ce == nil {
		return nil
	}
	fp := fieldsPool.Get().(*[]zap.Field)
	fields := (*fp)[:0]
	fields = append(fields, h.fields...)
	if r.NumAttrs() > 0 {
		open := len(fields)
		fields = appendNamespaces(fields, h.groups)
		attrs := len(fields)
		r.Attrs(func(a slog.Attr) bool {
			fields = appendAttr(fields, a)
			return true
		})
		if len(fields) == attrs { // nothing landed in the groups
			fields = fields[:open]
		}
	}
	ce.Write(fields...)
	clear(fields) // drop references to the values logged
	*fp = fields[:0]
	fieldsPool.Put(fp)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var added []zap.Field
	for _, a := range attrs {
		added = appendAttr(added, a)
	}
	if len(added) == 0 {
		return h
	}
	h2 := *h
	h2.fields = appendNamespaces(slices.Clip(h.fields), h.groups)
	h2.fields = append(h2.fields, added...)
	h2.groups = nil
	return &h2
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.groups = append(slices.Clip(h.groups), name)
	return &h2
}

func appendNamespaces(fs []zap.Field, groups []string) []zap.Field {
	for _, g := range groups {
		fs = append(fs, zap.Namespace(g))
	}
	return fs
}

// appendAttr converts a as the slog handlers of the standard library
// would: values resolved, an empty attribute dropped, a group without a
// key inlined and one without attributes dropped.
func appendAttr(fs []zap.Field, a slog.Attr) []zap.Field {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return append(fs, zap.String(a.Key, v.String()))
	case slog.KindInt64:
		return append(fs, zap.Int64(a.Key, v.Int64()))
	case slog.KindUint64:
		return append(fs, zap.Uint64(a.Key, v.Uint64()))
	case slog.KindFloat64:
		return append(fs, zap.Float64(a.Key, v.Float64()))
	case slog.KindBool:
		return append(fs, zap.Bool(a.Key, v.Bool()))
	case slog.KindDuration:
		return append(fs, zap.Duration(a.Key, v.Duration()))
	case slog.KindTime:
		return append(fs, zap.Time(a.Key, v.Time()))
	case slog.KindGroup:
		attrs := v.Group()
		if a.Key == "" {
			for _, ga := range attrs {
				fs = appendAttr(fs, ga)
			}
			return fs
		}
		if len(attrs) == 0 {
			return fs
		}
		return append(fs, zap.Object(a.Key, slogGroup(attrs)))
	}
	x := v.Any()
	if a.Key == "" && x == nil {
		return fs
	}
	if err, ok := x.(error); ok {
		return append(fs, zap.NamedError(a.Key, err))
	}
	return append(fs, zap.Any(a.Key, x))
}

// slogGroup writes a group's attributes as one nested object.
type slogGroup []slog.Attr

func (g slogGroup) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	var buf [4]zap.Field // one attribute's fields: more only for an inlined group
	for _, a := range g {
		for _, f := range appendAttr(buf[:0], a) {
			f.AddTo(enc)
		}
	}
	return nil
}

// zapLevelOfSlog maps slog's open-ended levels onto Lambda's six.
func zapLevelOfSlog(l slog.Level) zapcore.Level {
	switch {
	case l < slog.LevelDebug:
		return LevelTrace
	case l < slog.LevelInfo:
		return zapcore.DebugLevel
	case l < slog.LevelWarn:
		return zapcore.InfoLevel
	case l < slog.LevelError:
		return zapcore.WarnLevel
	case l < SlogLevelFatal:
		return zapcore.ErrorLevel
	}
	return zapcore.FatalLevel
}
