package concurrent

import (
	"encoding/json"
	"io"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"github.com/lmigo/lmigo/limits"
	"go.uber.org/zap"
)

// emfNamespace is the CloudWatch namespace of the runtime's metrics.
const emfNamespace = "lmigo"

// The metrics of an EMF document, with their CloudWatch units. Over the
// interval:
//   - Invocations: the invocations taken.
//   - Errors: those answered with an error (a handler's error or panic,
//     or one the runtime detected).
//   - Panics: those of them that were handler panics.
//   - InFlightMax: the most in flight at once.
//   - AllSlotsBusyTime: how long every slot held an invocation. No /next
//     was outstanding, so an invoke arriving then was throttled.
//   - MemoryHoldTime: how long new invocations were held back because the
//     heap was near the memory limit (admission.go).
//
// At its end:
//   - RetainedBufferBytes: what the slots keep between invocations.
//   - HeapInUse: the heap's in-use spans (objects and the free space
//     within them), as runtime.MemStats.HeapInuse counts.
//   - Overrunning: the handlers running past their deadline (overrun.go).
//
// Over the interval again:
//   - SlotsReplaced: slots replaced because their handler overran.
//   - EndedWedged: 1 in the last document of an environment that ended
//     itself because no slot could serve.
var emfMetrics = [...]struct{ name, unit string }{
	{"Invocations", "Count"},
	{"Errors", "Count"},
	{"Panics", "Count"},
	{"InFlightMax", "Count"},
	{"AllSlotsBusyTime", "Milliseconds"},
	{"MemoryHoldTime", "Milliseconds"},
	{"RetainedBufferBytes", "Bytes"},
	{"HeapInUse", "Bytes"},
	{"Overrunning", "Count"},
	{"SlotsReplaced", "Count"},
	{"EndedWedged", "Count"},
}

// runtimeMetrics aggregates what the runtime does between two EMF
// documents. Slots update the counters with atomic operations: two for
// an invocation's start, plus a compare-and-swap when it raises the
// high-water mark, and one for its end. The emitter swaps them to zero, so
// each document holds one interval. Nothing on the hot path allocates or
// takes a lock; the clock is read only when the last free slot is taken
// or given back. The counting, begin and end, is in inflight.go.
type runtimeMetrics struct {
	invocations atomic.Uint64
	inflight    atomic.Int64
	maxInflight atomic.Int64 // high-water mark of inflight in the interval
	errors      atomic.Uint64
	panics      atomic.Uint64
	// busySince is when every slot became busy with an invocation (clock
	// reading, see now), 0 while one is free; busyTime sums such spans.
	busySince atomic.Int64
	busyTime  atomic.Int64
	// Written by the overrun watch, rarely.
	replaced atomic.Uint64
	wedged   atomic.Uint64
	// The counters are written by every slot; keep other data off their
	// cache lines.
	_ [64]byte

	slots    int64
	epoch    time.Time
	out      io.Writer
	interval time.Duration
	function string // FunctionName dimension; none when ""
	samples  []metrics.Sample
	mu       sync.Mutex // one document at a time
	since    time.Time  // start of the interval being counted
}

// newMetrics returns nil when metrics are off: every method is a no-op on
// a nil receiver, so the hot path pays one nil check. The documents go to
// out.
func newMetrics(cfg limits.Config, out io.Writer) *runtimeMetrics {
	if cfg.Metrics != limits.MetricsEMF {
		return nil
	}
	now := time.Now()
	return &runtimeMetrics{
		slots:    int64(cfg.Slots),
		epoch:    now,
		out:      out,
		interval: cfg.MetricsInterval,
		function: cfg.FunctionName,
		samples: []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
		},
		since: now,
	}
}

// replacedSlot counts a slot replaced because its handler overran.
func (m *runtimeMetrics) replacedSlot() {
	if m != nil {
		m.replaced.Add(1)
	}
}

// failed counts an invocation answered with an error; err is the handler's
// error, nil for one the runtime detected.
func (m *runtimeMetrics) failed(err error) {
	if m == nil {
		return
	}
	m.errors.Add(1)
	if _, ok := err.(*PanicError); ok { //nolint:errorlint // the handler adapter returns it unwrapped
		m.panics.Add(1)
	}
}

// takeBusyTime returns the time every slot was busy since the last call,
// counting a span still open up to now.
func (m *runtimeMetrics) takeBusyTime() time.Duration {
	if since := m.busySince.Load(); since != 0 && m.inflight.Load() == m.slots {
		if now := m.now(); m.busySince.CompareAndSwap(since, now) {
			m.busyTime.Add(now - since)
		}
	}
	return time.Duration(m.busyTime.Swap(0))
}

// startMetrics writes an EMF document every interval until the returned
// function is called; that function writes the last one, for the time
// since, and returns. Without metrics it does nothing.
func (rt *Runtime) startMetrics() (stop func()) {
	m := rt.metrics
	if m == nil {
		return func() {}
	}
	stopTicks := every(m.interval, rt.emitMetrics)
	return func() {
		stopTicks()
		rt.emitMetrics(time.Now())
	}
}

// emitMetrics writes the document of the interval ending now, in one
// write. CloudWatch takes one log line as one event.
func (rt *Runtime) emitMetrics(now time.Time) {
	m := rt.metrics
	retained := 0
	rt.slotsMu.RLock()
	for _, s := range rt.slots {
		retained += s.bufs.Retained()
	}
	rt.slotsMu.RUnlock()
	overrunning := rt.overrunsNow()
	m.mu.Lock()
	defer m.mu.Unlock()
	metrics.Read(m.samples)
	heap := uint64(0)
	for _, s := range m.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			heap += s.Value.Uint64()
		}
	}
	values := [len(emfMetrics)]float64{
		float64(m.invocations.Swap(0)),
		float64(m.errors.Swap(0)),
		float64(m.panics.Swap(0)),
		// The next interval starts from the invocations still in flight.
		float64(m.maxInflight.Swap(m.inflight.Load())),
		float64(m.takeBusyTime()) / float64(time.Millisecond),
		float64(rt.takeHeldTime()) / float64(time.Millisecond),
		float64(retained),
		float64(heap),
		float64(overrunning),
		float64(m.replaced.Swap(0)),
		float64(m.wedged.Swap(0)),
	}
	doc := appendEMF(nil, now, now.Sub(m.since), m.function, values[:])
	m.since = now
	if _, err := m.out.Write(doc); err != nil {
		rt.log.Warn("cannot write metrics", zap.Error(err))
	}
}

// appendEMF appends one CloudWatch Embedded Metric Format document, a
// single line. It holds the _aws metadata (timestamp in milliseconds, one
// metric directive) and the FunctionName dimension when known. Then come
// intervalMs and one member per metric. intervalMs is not a metric: it is
// the length of the interval the values cover.
func appendEMF(b []byte, now time.Time, interval time.Duration, function string, values []float64) []byte {
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, now.UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":`...)
	b = appendJSONString(b, emfNamespace)
	b = append(b, `,"Dimensions":[[`...)
	if function != "" {
		b = append(b, `"FunctionName"`...)
	}
	b = append(b, `]],"Metrics":[`...)
	for i, mt := range emfMetrics {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Name":`...)
		b = appendJSONString(b, mt.name)
		b = append(b, `,"Unit":`...)
		b = appendJSONString(b, mt.unit)
		b = append(b, '}')
	}
	b = append(b, `]}]}`...)
	if function != "" {
		b = append(b, `,"FunctionName":`...)
		b = appendJSONString(b, function)
	}
	b = append(b, `,"intervalMs":`...)
	b = strconv.AppendInt(b, interval.Milliseconds(), 10)
	for i, mt := range emfMetrics {
		b = append(b, ',')
		b = appendJSONString(b, mt.name)
		b = append(b, ':')
		b = strconv.AppendFloat(b, values[i], 'f', -1, 64)
	}
	return append(b, '}', '\n')
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// newEMF is the runtime's half of the handler's metrics, and the writer of
// stdout that its documents share with the runtime's own (newMetrics), so
// that each goes out whole.
func newEMF(cfg limits.Config, stdout io.Writer) (*emf.Env, io.Writer) {
	out := &lockedWriter{w: stdout}
	return &emf.Env{Namespace: cfg.MetricsNamespace, Service: cfg.ServiceName,
		Function: cfg.FunctionName, Disabled: cfg.MetricsDisabled, Out: out, Limit: maxLogLine}, out
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
