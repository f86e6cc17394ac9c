package concurrent

import (
	"github.com/lmigo/lmigo/concurrent/internal/testhook"
	"go.uber.org/zap/zapcore"
)

// init sets the hooks of concurrent/lambdatest (internal/testhook) here,
// so that no exported name exists for them.
func init() {
	testhook.Replace = func(p testhook.Process) any {
		return Option(func(o *options) {
			o.stderr, o.stdout, o.exit, o.environ = zapcore.AddSync(p.Logs), p.Metrics, p.Exit, p.Environ
			if p.Own != nil {
				o.own = zapcore.AddSync(p.Own)
			}
		})
	}
	testhook.Lookup = func(opts any) (func(string) (string, bool), func() []string) {
		o := newOptions(opts.([]Option))
		return o.lookup, o.environ
	}
	testhook.Refused = func(h any) error {
		if r, ok := h.(refused); ok {
			return r.err
		}
		return nil
	}
}
