package concurrent

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// outageLogEvery is the most often the runtime repeats its warning while
// polls keep failing: N slots retrying with backoff would otherwise write
// N lines per backoff step.
const outageLogEvery = time.Second

// outage rate-limits what the slots log while /next fails: the first
// failure is logged at once, then at most one line per outageLogEvery for
// the whole runtime, counting the failures in between; the first poll that
// succeeds afterwards logs once that the Runtime API is back. It is shared
// by all slots.
type outage struct {
	down atomic.Bool // fast path for ok: one load per successful poll

	mu       sync.Mutex
	since    time.Time // first failure of this outage
	logged   time.Time // last line written
	failures int64     // failures since the outage began
	quiet    int64     // failures since the last line
}

// failed records a failed poll and logs it unless a line went out less than
// outageLogEvery ago.
func (o *outage) failed(log *zap.Logger, err error, backoff time.Duration) {
	now := time.Now()
	o.mu.Lock()
	if !o.down.Load() {
		o.down.Store(true)
		o.since, o.failures, o.quiet, o.logged = now, 0, 0, time.Time{}
	}
	o.failures++
	o.quiet++
	if now.Sub(o.logged) < outageLogEvery {
		o.mu.Unlock()
		return
	}
	failures, quiet, since := o.failures, o.quiet, o.since
	o.logged, o.quiet = now, 0
	o.mu.Unlock()
	log.Warn("polling for the next invocation failed, retrying",
		zap.Error(err), zap.Duration("backoff", backoff),
		zap.Int64("failures", failures), zap.Int64("failuresSinceLastLine", quiet),
		zap.Duration("downFor", now.Sub(since)))
}

// ok records a successful poll; after failures it logs the recovery once.
func (o *outage) ok(log *zap.Logger) {
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	if !o.down.Load() {
		o.mu.Unlock()
		return
	}
	o.down.Store(false)
	failures, since := o.failures, o.since
	o.mu.Unlock()
	log.Info("polling for the next invocation works again",
		zap.Int64("failures", failures), zap.Duration("downFor", time.Since(since)))
}
