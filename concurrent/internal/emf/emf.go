// Package emf records one invocation's metrics and writes them as
// CloudWatch Embedded Metric Format documents, one line each. The runtime
// (package concurrent) owns a Set per invocation and flushes it when the
// invocation ends; package concurrent/metrics is its public face.
package emf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The errors of a call that records nothing; package metrics exports them.
var (
	ErrNoInvocation      = errors.New("metrics: the context is not an lmigo invocation's")
	ErrNoNamespace       = errors.New("metrics: POWERTOOLS_METRICS_NAMESPACE is not set")
	ErrInvocationEnded   = errors.New("metrics: the invocation's metrics are written already")
	ErrInvalid           = errors.New("metrics: cannot be written as EMF")
	ErrTooManyDimensions = errors.New("metrics: more than 30 dimensions")
	ErrTooLarge          = errors.New("metrics: dimensions and metadata too large for one log line")
)

// The EMF specification's limits, and CloudWatch's.
const (
	MaxMetrics    = 100  // MetricDefinitions in one directive
	MaxDimensions = 30   // keys in one DimensionSet
	MaxValues     = 100  // values in one metric's array
	maxName       = 255  // a metric's name (CloudWatch's MetricDatum)
	maxDimKey     = 250  // a dimension reference (the specification's schema)
	maxDimValue   = 1024 // a dimension's value
	// maxFixed bounds the dimensions and metadata, which every document
	// repeats: with the header and one metric of 100 values they stay
	// within one log line.
	maxFixed = 16 << 10
	// maxQuotedName bounds a name as a JSON string: encoding/json writes
	// <, > and & (and U+2028, U+2029) as six bytes each.
	maxQuotedName = 6*maxName + 2
	// maxChunk bounds what one metric's chunk adds to a document: its
	// definition, its name again, 100 values of at most 24 bytes each.
	maxChunk = 2*maxQuotedName + 64 + MaxValues*25
)

// Keys the runtime writes in every document.
const (
	keyAWS       = "_aws"
	KeyRequestID = "requestId"
	keyService   = "service"
	keyFunction  = "function_name"
)

// units are CloudWatch's metric units (MetricDatum).
var units = map[string]bool{}

func init() {
	for _, u := range []string{
		"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes",
		"Terabytes", "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
		"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
		"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
		"Count/Second", "None",
	} {
		units[u] = true
	}
}

// EnvKey is the context key under which the runtime's base context holds
// its *Env.
type EnvKey struct{}

// Key is the context key under which an invocation's context answers its
// *Set.
type Key struct{}

// Env is what every invocation's documents share, for one runtime.
type Env struct {
	Namespace string // "" when unset: nothing is recorded
	Service   string // the service dimension, "" for none
	Function  string // ColdStart's function_name dimension, "" for none
	// Disabled: metrics are recorded and checked, never written
	// (POWERTOOLS_METRICS_DISABLED), with or without a Namespace.
	Disabled bool
	// Out takes each document in one Write; the caller serialises it with
	// the runtime's other writers of stdout.
	Out io.Writer
	// Limit bounds a document, its newline included.
	Limit int

	coldStart atomic.Bool
}

// TakeColdStart reports true once per Env, when metrics are on.
func (e *Env) TakeColdStart() bool {
	return e != nil && e.Namespace != "" && !e.Disabled && !e.coldStart.Load() && e.coldStart.CompareAndSwap(false, true)
}

// WriteColdStart writes the ColdStart document, as Powertools writes it:
// ColdStart 1 Count, by function_name and service.
func (e *Env) WriteColdStart(requestID string, now time.Time) error {
	s := NewSet(e)
	if e.Function != "" {
		s.dims = append(s.dims, dim{keyFunction, e.Function})
	}
	if err := s.add("ColdStart", "Count", false, 1); err != nil {
		return err
	}
	return s.Flush(requestID, now)
}

type metric struct {
	name   string
	unit   string
	high   bool
	values []float64
}

type dim struct{ key, value string }

type meta struct {
	key string
	raw []byte
}

// Set is one invocation's metrics, dimensions and metadata. It is safe for
// concurrent use.
type Set struct {
	env     *Env
	mu      sync.Mutex
	ended   bool
	metrics []metric
	index   map[string]int
	dims    []dim
	meta    []meta
	fixed   int // encoded size of dims and meta
}

// Ended is the Set of an invocation that has ended.
var Ended = &Set{ended: true}

// NewSet returns an empty Set written with env.
func NewSet(env *Env) *Set { return &Set{env: env} }

func (s *Set) check() error {
	switch {
	case s.ended:
		return ErrInvocationEnded
	case s.env == nil || s.env.Namespace == "" && !s.env.Disabled:
		return ErrNoNamespace
	}
	return nil
}

// Add records value for the metric name, in unit, at high (1 s) or
// standard (60 s) resolution. A name added again adds a value to it, in
// the same unit and resolution.
func (s *Set) Add(name, unit string, high bool, value float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	return s.add(name, unit, high, value)
}

func (s *Set) add(name, unit string, high bool, value float64) error {
	switch {
	case !validName(name, maxName):
		return fmt.Errorf("%w: metric name %q: not 1..255 bytes of UTF-8 without control characters", ErrInvalid, cut(name))
	case !units[unit]:
		return fmt.Errorf("%w: metric %s: unit %q is not a CloudWatch unit", ErrInvalid, name, cut(unit))
	case math.IsNaN(value) || math.IsInf(value, 0):
		return fmt.Errorf("%w: metric %s: value %v is not a finite number", ErrInvalid, name, value)
	}
	if i, ok := s.index[name]; ok {
		m := &s.metrics[i]
		if m.unit != unit || m.high != high {
			return fmt.Errorf("%w: metric %s: recorded already in %s at another unit or resolution", ErrInvalid, name, m.unit)
		}
		m.values = append(m.values, value)
		return nil
	}
	if err := s.free(name, "metric name"); err != nil {
		return err
	}
	if s.index == nil {
		s.index = make(map[string]int)
	}
	s.index[name] = len(s.metrics)
	s.metrics = append(s.metrics, metric{name: name, unit: unit, high: high, values: []float64{value}})
	return nil
}

// free reports an error if key is reserved or names a member of another
// kind: metrics, dimensions and metadata share the document's root.
func (s *Set) free(key, what string) error {
	taken := key == keyAWS || key == KeyRequestID || key == keyService && s.env.Service != ""
	if _, ok := s.index[key]; ok {
		taken = true
	}
	for _, d := range s.dims {
		taken = taken || d.key == key
	}
	for _, m := range s.meta {
		taken = taken || m.key == key
	}
	if taken {
		return fmt.Errorf("%w: %s %q is taken by another member of the document", ErrInvalid, what, cut(key))
	}
	return nil
}

// AddDimension sets the dimension key to value for every metric of the
// invocation. A key set again takes the new value.
func (s *Set) AddDimension(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if !validDimension(key, maxDimKey) || key[0] == ':' {
		return fmt.Errorf("%w: dimension key %q: not 1..250 printable ASCII characters, not beginning with a colon", ErrInvalid, cut(key))
	}
	if !validDimension(value, maxDimValue) {
		return fmt.Errorf("%w: dimension %s: value %q is not 1..1024 printable ASCII characters", ErrInvalid, key, cut(value))
	}
	for i := range s.dims {
		if s.dims[i].key == key {
			return s.grow(quoted(value)-quoted(s.dims[i].value), func() { s.dims[i].value = value })
		}
	}
	if key != keyService || s.env.Service == "" {
		if err := s.free(key, "dimension key"); err != nil {
			return err
		}
	}
	n := len(s.dims) + 1
	if s.env.Service != "" && key != keyService && !s.hasDim(keyService) {
		n++
	}
	if n > MaxDimensions {
		return fmt.Errorf("%w: cannot add %s", ErrTooManyDimensions, key)
	}
	// The key is written twice: in the dimension set and as a member.
	return s.grow(2*quoted(key)+quoted(value)+3, func() { s.dims = append(s.dims, dim{key, value}) })
}

func (s *Set) hasDim(key string) bool {
	for _, d := range s.dims {
		if d.key == key {
			return true
		}
	}
	return false
}

// AddMetadata sets the member key, searchable in the logs but not a
// dimension, to value encoded as JSON. A key set again takes the new value.
func (s *Set) AddMetadata(key string, value any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if !validName(key, maxName) {
		return fmt.Errorf("%w: metadata key %q: not 1..255 bytes of UTF-8 without control characters", ErrInvalid, cut(key))
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("%w: metadata %s: %w", ErrInvalid, key, err)
	}
	for i := range s.meta {
		if s.meta[i].key == key {
			return s.grow(len(raw)-len(s.meta[i].raw), func() { s.meta[i].raw = raw })
		}
	}
	if err := s.free(key, "metadata key"); err != nil {
		return err
	}
	return s.grow(quoted(key)+len(raw)+2, func() { s.meta = append(s.meta, meta{key, raw}) })
}

// grow applies change if the fixed part stays within its bound.
func (s *Set) grow(n int, change func()) error {
	if s.fixed+n > maxFixed {
		return fmt.Errorf("%w: over %d bytes", ErrTooLarge, maxFixed)
	}
	s.fixed += n
	change()
	return nil
}

// Flush writes the recorded metrics, if any, as EMF documents to the
// Env's Out, each one line within its Limit, and ends the Set: later
// calls return ErrInvocationEnded. Past MaxMetrics metrics, or MaxValues
// values of one metric, or the line's limit, it writes several documents,
// each with every dimension and all the metadata.
func (s *Set) Flush(requestID string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil
	}
	s.ended = true
	if len(s.metrics) == 0 || s.env == nil || s.env.Namespace == "" || s.env.Disabled {
		return nil
	}
	var w docWriter
	w.start(s, requestID, now)
	if w.fixedLen()+maxChunk+2 > s.env.Limit {
		return fmt.Errorf("%w: %d bytes before the first metric", ErrTooLarge, w.fixedLen())
	}
	for i := range s.metrics {
		m := &s.metrics[i]
		for off := 0; off < len(m.values); off += MaxValues {
			if w.count == MaxMetrics || w.has(i) || w.size()+maxChunk+2 > s.env.Limit {
				if err := w.write(s.env.Out); err != nil {
					return err
				}
			}
			w.add(i, m, m.values[off:min(off+MaxValues, len(m.values))])
		}
	}
	return w.write(s.env.Out)
}

// docWriter builds one document at a time: the directive's metric
// definitions (defs) and their values (vals) grow side by side, and are
// joined around the fixed members when it is written.
type docWriter struct {
	head  []byte // up to the metric definitions
	mid   []byte // from the end of the definitions to the metric values
	defs  []byte
	vals  []byte
	count int
	last  int // index of the last metric added, -1 for none
}

func (w *docWriter) start(s *Set, requestID string, now time.Time) {
	b := append(w.head[:0], `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, now.UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":`...)
	b = appendString(b, s.env.Namespace)
	b = append(b, `,"Dimensions":[[`...)
	n := 0
	for _, d := range s.dims {
		b = appendSep(b, n)
		b = appendString(b, d.key)
		n++
	}
	service := s.env.Service != "" && !s.hasDim(keyService)
	if service {
		b = appendSep(b, n)
		b = appendString(b, keyService)
	}
	w.head = append(b, `]],"Metrics":[`...)
	m := append(w.mid[:0], `]}]}`...)
	for _, d := range s.dims {
		m = append(m, ',')
		m = appendString(m, d.key)
		m = append(m, ':')
		m = appendString(m, d.value)
	}
	if service {
		m = append(m, `,"service":`...)
		m = appendString(m, s.env.Service)
	}
	for _, md := range s.meta {
		m = append(m, ',')
		m = appendString(m, md.key)
		m = append(m, ':')
		m = append(m, md.raw...)
	}
	m = append(m, `,"requestId":`...)
	w.mid = appendString(m, requestID)
	w.last = -1
}

func (w *docWriter) fixedLen() int { return len(w.head) + len(w.mid) }
func (w *docWriter) size() int     { return w.fixedLen() + len(w.defs) + len(w.vals) }
func (w *docWriter) has(i int) bool {
	return w.last == i
}

func (w *docWriter) add(i int, m *metric, values []float64) {
	w.defs = appendSep(w.defs, w.count)
	w.defs = append(w.defs, `{"Name":`...)
	w.defs = appendString(w.defs, m.name)
	w.defs = append(w.defs, `,"Unit":`...)
	w.defs = appendString(w.defs, m.unit)
	if m.high {
		// Standard resolution is the default: Powertools too writes only 1.
		w.defs = append(w.defs, `,"StorageResolution":1`...)
	}
	w.defs = append(w.defs, '}')
	w.vals = append(w.vals, ',')
	w.vals = appendString(w.vals, m.name)
	w.vals = append(w.vals, ':')
	if len(values) == 1 {
		w.vals = strconv.AppendFloat(w.vals, values[0], 'g', -1, 64)
	} else {
		w.vals = append(w.vals, '[')
		for j, v := range values {
			w.vals = appendSep(w.vals, j)
			w.vals = strconv.AppendFloat(w.vals, v, 'g', -1, 64)
		}
		w.vals = append(w.vals, ']')
	}
	w.count++
	w.last = i
}

// write writes the document, one line in one Write, and empties it.
func (w *docWriter) write(out io.Writer) error {
	if w.count == 0 {
		return nil
	}
	doc := make([]byte, 0, w.size()+2)
	doc = append(doc, w.head...)
	doc = append(doc, w.defs...)
	doc = append(doc, w.mid...)
	doc = append(doc, w.vals...)
	doc = append(doc, '}', '\n')
	w.defs, w.vals, w.count, w.last = w.defs[:0], w.vals[:0], 0, -1
	_, err := out.Write(doc)
	return err
}

func appendSep(b []byte, i int) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	return b
}

// quoted is the length of s as a JSON string.
func quoted(s string) int { return len(appendString(nil, s)) }

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// validName: 1..max bytes of UTF-8, no control characters.
func validName(s string, max int) bool {
	if s == "" || len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}

// validDimension: 1..max printable ASCII characters, not only spaces, as
// CloudWatch takes dimension names and values.
func validDimension(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	blank := true
	for i := range len(s) {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		blank = blank && c == ' '
	}
	return !blank
}

// cut shortens what an error quotes.
func cut(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
