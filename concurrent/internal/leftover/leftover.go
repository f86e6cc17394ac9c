// Package leftover finds the goroutines that still carry an invocation's
// profiler labels, from one goroutine profile. The runtime runs each
// invocation under the labels requestId and function, and the goroutines
// a handler starts inherit them. A goroutine that carries them while no
// slot serves that request ID any more has outlived its invocation.
//
// Scan costs one goroutine profile (runtime/pprof, debug=1): it stops the
// world briefly and reads every goroutine's stack, so it is never taken
// per invocation. The profile is read as it is written, line by line.
package leftover

import (
	"bytes"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// Label keys the runtime sets. KeyDetached marks work that GoDetached
// started: meant to outlive its invocation.
const (
	KeyRequestID = "requestId"
	KeyFunction  = "function"
	KeyDetached  = "detached"
)

// SlotFunc is the function each slot's goroutine runs. A goroutine with it
// on its stack serves the invocation its labels name: that invocation has
// not ended.
const SlotFunc = "github.com/lmigo/lmigo/concurrent.runSlot"

// PoolFuncs are the goroutines of connection pools, which a handler's
// first call starts and which serve every invocation after it. They carry
// that invocation's labels but are no work of its own.
var PoolFuncs = []string{
	"net/http.(*persistConn).readLoop",
	"net/http.(*persistConn).writeLoop",
	"net/http.(*http2ClientConn).readLoop",
	"golang.org/x/net/http2.(*ClientConn).readLoop",
}

// Count is what one profile shows of one invocation's goroutines.
type Count struct {
	// Slot counts the goroutines of a slot that carry the invocation:
	// it is still being served.
	Slot int
	// Unsure counts goroutines whose stack was cut at the profile's
	// depth: a slot's may be among them.
	Unsure int
	// Leftover counts the other goroutines that carry the invocation,
	// but Detached.
	Leftover int
	// Detached counts those GoDetached started.
	Detached int
}

// Ended reports whether the profile shows the invocation no longer
// served: no goroutine that carries it may be its slot's.
func (c *Count) Ended() bool { return c.Slot == 0 && c.Unsure == 0 }

// Scan takes one goroutine profile and counts, for each request ID in a
// goroutine's labels, the goroutines that carry it. Goroutines of
// net/http's connection pools are not counted.
func Scan() (map[string]*Count, error) {
	p := parser{depth: stackDepth(os.Getenv("GODEBUG")), out: map[string]*Count{}}
	err := pprof.Lookup("goroutine").WriteTo(&p, 1)
	p.flush()
	return p.out, err
}

// stackDepth is the most frames the profile keeps of a stack: 128 unless
// GODEBUG's profstackdepth says otherwise.
func stackDepth(godebug string) int {
	depth := 128
	for kv := range strings.SplitSeq(godebug, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "profstackdepth="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				depth = n
			}
		}
	}
	return depth
}

// parser reads a goroutine profile in its debug=1 text form. Each record
// is a count of goroutines with one stack and one set of labels:
//
//	2 @ 0x43a1c6 0x44c5d3 ...
//	# labels: {"function":"orders", "requestId":"8476a536"}
//	#	0x44c5d2	main.handler.func1+0x32	/src/main.go:21
//
// and ends with a blank line.
type parser struct {
	depth int
	out   map[string]*Count
	line  []byte // a line cut by the end of a Write
	rec   record
}

type record struct {
	n, pcs   int
	id       string
	detached bool
	slot     bool
	pool     bool
}

func (p *parser) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.line = append(p.line, b...)
			break
		}
		line := b[:i]
		if len(p.line) > 0 {
			p.line = append(p.line, line...)
			line = p.line
		}
		p.parseLine(line)
		p.line = p.line[:0]
		b = b[i+1:]
	}
	return n, nil
}

func (p *parser) parseLine(line []byte) {
	switch {
	case len(line) == 0:
		p.flush()
	case bytes.HasPrefix(line, []byte("# labels: ")):
		p.labels(line[len("# labels: "):])
	case line[0] == '#':
		if f := bytes.Fields(line); len(f) >= 3 {
			name, _, _ := bytes.Cut(f[2], []byte("+0x"))
			switch {
			case string(name) == SlotFunc:
				p.rec.slot = true
			case isPoolFunc(name):
				p.rec.pool = true
			}
		}
	default:
		// "N @ pc pc ...", or the header line.
		count, pcs, ok := bytes.Cut(line, []byte(" @"))
		if n, err := strconv.Atoi(string(count)); ok && err == nil {
			p.flush()
			p.rec = record{n: n, pcs: len(bytes.Fields(pcs))}
		}
	}
}

func isPoolFunc(name []byte) bool {
	for _, f := range PoolFuncs {
		if string(name) == f {
			return true
		}
	}
	return false
}

// labels reads {"key":"value", ...}, each quoted as Go quotes strings.
func (p *parser) labels(b []byte) {
	s := strings.TrimSuffix(strings.TrimPrefix(string(b), "{"), "}")
	for s != "" {
		key, rest, ok := unquotePrefix(s)
		if !ok || !strings.HasPrefix(rest, ":") {
			return
		}
		val, rest, ok := unquotePrefix(rest[1:])
		if !ok {
			return
		}
		switch key {
		case KeyRequestID:
			p.rec.id = val
		case KeyDetached:
			p.rec.detached = true
		}
		s = strings.TrimPrefix(rest, ", ")
	}
}

func unquotePrefix(s string) (val, rest string, ok bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", false
	}
	val, err = strconv.Unquote(q)
	return val, s[len(q):], err == nil
}

// flush counts the record read, if it names an invocation.
func (p *parser) flush() {
	r := p.rec
	p.rec = record{}
	if r.id == "" || r.n == 0 || r.pool {
		return
	}
	c := p.out[r.id]
	if c == nil {
		c = &Count{}
		p.out[r.id] = c
	}
	switch {
	case r.slot:
		c.Slot += r.n
	case r.pcs >= p.depth:
		c.Unsure += r.n
	case r.detached:
		c.Detached += r.n
	default:
		c.Leftover += r.n
	}
}
