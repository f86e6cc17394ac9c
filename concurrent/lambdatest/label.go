package lambdatest

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Bounds of an event's name in a failure, in bytes.
const (
	labelHead = 60 // shown of an event that parts from the others early
	labelSpan = 40 // of a window where it parts from another, from its member's start
	labelTail = 16 // shown at least past the place where it parts
	labelBack = 32 // a window may start before that place, to begin its member
)

// labels names each event for a failure, on one line: compact, and by
// where it parts from the others when they share a long start: the first
// place (from the events least like it) and the last (from the one most
// like it).
func labels(events [][]byte) []string {
	flat := make([][]byte, len(events))
	for i, e := range events {
		flat[i] = flatten(e)
	}
	out := make([]string, len(events))
	for i, e := range flat {
		first, last := len(e), 0
		for j, o := range flat {
			if j != i {
				p := commonPrefix(e, o)
				first, last = min(first, p), max(last, p)
			}
		}
		out[i] = label(e, first, last)
	}
	return out
}

// flatten is an event without its insignificant white space: compact
// JSON, or runs of white space made one space.
func flatten(e []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, e) == nil {
		return b.Bytes()
	}
	return bytes.Join(bytes.Fields(e), []byte(" "))
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// label shows e's head when it parts from the others there, and a
// window at each place it parts further on, "..." where bytes are left
// out.
func label(e []byte, first, last int) string {
	if len(e) <= labelHead {
		return "(" + string(e) + ")"
	}
	var b strings.Builder
	b.WriteByte('(')
	end := 0 // of what is shown
	show := func(from, to int) {
		switch {
		case from > end && end == 0:
			b.WriteString("...")
		case from > end:
			b.WriteString(" ... ")
		}
		end = max(end, from)
		if to > end {
			b.Write(e[end:to])
			end = to
		}
	}
	if first >= len(e) || first+labelTail <= labelHead {
		show(0, runeEnd(e, labelHead))
	}
	for _, p := range []int{first, last} {
		if p < len(e) && p+labelTail > end {
			from := memberStart(e, p)
			show(from, runeEnd(e, max(from+labelSpan, p+labelTail)))
		}
	}
	if end < len(e) {
		b.WriteString("...")
	}
	b.WriteByte(')')
	return b.String()
}

// memberStart is where the JSON member holding byte p begins (`,"key"`
// or `{"key"`), when that is near, else a little before p.
func memberStart(e []byte, p int) int {
	for k := p - 1; k >= max(0, p-labelBack); k-- {
		if (e[k] == ',' || e[k] == '{' || e[k] == '[') && k+1 < len(e) && e[k+1] == '"' {
			return k + 1
		}
	}
	s := max(0, p-labelTail/2)
	for s > 0 && !utf8.RuneStart(e[s]) {
		s--
	}
	return s
}

// runeEnd is n, or the end of the rune n falls in, within e.
func runeEnd(e []byte, n int) int {
	n = min(n, len(e))
	for n < len(e) && !utf8.RuneStart(e[n]) {
		n++
	}
	return n
}
