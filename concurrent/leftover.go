package concurrent

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/concurrent/internal/leftover"
	"go.uber.org/zap"
)

// Work that outlives its answer. A goroutine still carrying the labels of
// an invocation that no slot serves any more (labels.go) was started by
// its handler and outlived it. The runtime looks for such goroutines off
// the hot path, with one goroutine profile a look
// (internal/leftover): at shutdown, once the slots have drained; when the
// overrun watch replaces a slot; and, with LMIGO_REPORT=on, once a minute.
// Each invocation found gets one WARN, with its requestId and how many of
// its goroutines still run. Work started with Go is waited for, and
// GoDetached's is named detached: neither is counted. A goroutine of a
// connection pool that a handler's call started (net/http's) is no work
// of its own, and is not counted either. A process that runs several
// runtimes at once (a test binary) sees all their invocations in a look.

const (
	msgLeftover = "goroutines outlived their invocation"
	// leftoverEvery is how often LMIGO_REPORT=on looks.
	leftoverEvery = time.Minute
	// maxLeftoverLines bounds the warnings of one look; the invocations
	// beyond it are warned about at a later one.
	maxLeftoverLines = 100
)

// leftovers is what the looks remember: the invocations warned about,
// while goroutines of theirs remain, so that each is warned about once.
type leftovers struct {
	mu     sync.Mutex
	every  time.Duration // leftoverEvery; tests shorten it before Run
	warned map[string]bool
	looks  atomic.Uint64 // profiles taken, which tests count
}

// watchLeftovers starts the look of every minute when LMIGO_REPORT=on and
// labels are on; stop ends it and waits for it.
func (rt *Runtime) watchLeftovers() (stop func()) {
	if !rt.cfg.Report || !rt.cfg.Labels {
		return func() {}
	}
	return every(rt.left.every, func(time.Time) { rt.findLeftovers() })
}

// findLeftovers looks once for goroutines that outlived their invocation,
// and warns of each invocation not warned about before.
func (rt *Runtime) findLeftovers() {
	if !rt.cfg.Labels {
		return
	}
	rt.left.looks.Add(1)
	found, err := leftover.Scan()
	if err != nil {
		rt.log.Warn("cannot look for goroutines that outlived their invocation", zap.Error(err))
		return
	}
	ids := make([]string, 0, len(found))
	for id, c := range found {
		if c.Ended() && c.Leftover > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	l := &rt.left
	l.mu.Lock()
	defer l.mu.Unlock()
	warned := make(map[string]bool, len(ids))
	lines := 0
	for _, id := range ids {
		switch {
		case l.warned[id]:
		case lines == maxLeftoverLines:
			continue
		default:
			lines++
			c := found[id]
			fields := []zap.Field{zap.String(keyRequestID, id), zap.Int("count", c.Leftover)}
			if c.Detached > 0 {
				fields = append(fields, zap.Int("detached", c.Detached))
			}
			rt.log.Warn(msgLeftover, fields...)
		}
		warned[id] = true
	}
	l.warned = warned
}
