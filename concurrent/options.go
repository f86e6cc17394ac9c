package concurrent

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/lmigo/lmigo/concurrent/codec"
	"github.com/lmigo/lmigo/rapi"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Option configures a Runtime.
type Option func(*options)

type options struct {
	baseCtx context.Context
	values  []ctxValue
	handler handlerConfig
	lookup  func(string) (string, bool)
	environ func() []string // the names warned of when unknown; nil: none
	logger  *zap.Logger
	sigterm bool          // WithSIGTERM
	hooks   []func()      // WithSIGTERM
	codec   string        // WithCodec
	rapi    []rapi.Option // tests only: Runtime API client knobs
	errs    []error       // options that could not be read (WithLambdaOptions)

	// The process's side effects, replaced by tests (in this package an
	// Option is any func(*options)): where the default logger and the EMF
	// documents go, and how Start ends the process.
	stderr zapcore.WriteSyncer
	stdout io.Writer
	exit   func(code int)
	// own, when set (concurrent/lambdatest), takes the runtime's own lines
	// apart from the handler's, which stderr takes.
	own zapcore.WriteSyncer
	// codecs is the codec registry: what the binary links.
	codecs registry
	// tune, tests only, changes the Runtime New built before it returns:
	// timing, the heap figure, the memory-limit setter (memGuard,
	// idleTracker, Runtime.setMemoryLimit).
	tune []func(*Runtime)
}

type ctxValue struct{ key, val any }

func defaultOptions() options {
	return options{
		baseCtx: context.Background(),
		lookup:  os.LookupEnv,
		environ: os.Environ,
		stderr:  os.Stderr,
		stdout:  os.Stdout,
		exit:    os.Exit,
		codecs:  registry{lookup: codec.Lookup, linked: codec.Linked},
	}
}

// newOptions applies opts to the defaults.
func newOptions(opts []Option) options {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithContext sets the parent of every invocation's context. Its
// cancellation does not stop the runtime; cancel the context given to Run
// for that.
func WithContext(ctx context.Context) Option {
	return func(o *options) { o.baseCtx = ctx }
}

// WithContextValue adds a value to every invocation's context.
func WithContextValue(key, value any) Option {
	return func(o *options) { o.values = append(o.values, ctxValue{key, value}) }
}

// WithSetEscapeHTML sets whether JSON responses escape <, > and &. The
// default, false, matches aws-lambda-go.
func WithSetEscapeHTML(escape bool) Option {
	return func(o *options) { o.handler.escapeHTML = escape }
}

// WithSetIndent indents JSON responses as json.Encoder.SetIndent does.
func WithSetIndent(prefix, indent string) Option {
	return func(o *options) { o.handler.indentPrefix, o.handler.indent = prefix, indent }
}

// WithUseNumber decodes JSON numbers in events as json.Number.
func WithUseNumber(use bool) Option {
	return func(o *options) { o.handler.useNumber = use }
}

// WithDisallowUnknownFields makes event decoding fail on unknown fields.
func WithDisallowUnknownFields(disallow bool) Option {
	return func(o *options) { o.handler.disallowUnknownFields = disallow }
}

// WithCodec selects the JSON codec of typed handlers by name. "std" is the
// default: encoding/json, byte for byte what aws-lambda-go sends. Others
// are registered by a package under concurrent/codec, which the program
// must import, linking only the codecs it uses. LMIGO_JSON_CODEC, when
// set, takes precedence, so a deployed function can go back to std without
// a rebuild. New fails when the codec is not linked or does not support the
// other JSON options given.
func WithCodec(name string) Option {
	return func(o *options) { o.codec = strings.ToLower(strings.TrimSpace(name)) }
}

// WithLookupEnv replaces os.LookupEnv as the source of configuration, for
// tests and for programs that compute their environment. A lookup cannot
// list its names, so no unknown LMIGO_ variable is warned of.
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return func(o *options) { o.lookup, o.environ = lookup, nil }
}

// WithLogger replaces the runtime's logger. The default writes stderr in
// the AWS_LAMBDA_LOG_FORMAT, each line cut to 32 KiB. With l, the
// runtime's own lines keep that bound (their values are cut before l's
// core sees them); the handler's lines through Logger are l's own.
func WithLogger(l *zap.Logger) Option {
	return func(o *options) { o.logger = l }
}
