package main

import (
	"fmt"
	"slices"
	"strings"
)

// round is the slot goroutine's events from its n-th call of tidy
// (0-based) to the next: one invocation of a warm slot. The slot goroutine
// is the first to call runSlot; trees before (*slot).tidy had
// (*Runtime).tidy.
func round(events []event, n int) ([]event, error) {
	slot := ""
	tidy := mod + "concurrent.(*Runtime).tidy"
	for _, e := range events {
		if e.call && e.fn == mod+"concurrent.runSlot" && slot == "" {
			slot = e.g
		}
		if e.call && e.fn == mod+"concurrent.(*slot).tidy" {
			tidy = e.fn
		}
	}
	if slot == "" {
		return nil, fmt.Errorf("no call of %sconcurrent.runSlot in the trace", mod)
	}
	var at []int
	for i, e := range events {
		if e.g == slot && e.call && e.fn == tidy {
			at = append(at, i)
		}
	}
	if len(at) < n+2 {
		return nil, fmt.Errorf("%d calls of %s in the trace, want %d", len(at), tidy, n+2)
	}
	var way []event
	for _, e := range events[at[n]:at[n+1]] {
		if e.g == slot {
			way = append(way, e)
		}
	}
	return way, nil
}

// fold reads calls of one function in a row from the same caller (a loop
// over headers or bytes, say) once: the first is kept with all below it,
// the repeats are dropped.
func fold(way []event) []event {
	// end is the index just past the call at j and all below it.
	end := func(j int) int {
		depth := 0
		for k := j; k < len(way); k++ {
			if way[k].call {
				depth++
			} else {
				depth--
			}
			if depth == 0 {
				return k + 1
			}
		}
		return len(way)
	}
	var walk func(i, stop int) []event
	walk = func(i, stop int) []event {
		var out []event
		prev := ""
		for i < stop {
			if !way[i].call {
				out = append(out, way[i])
				prev = ""
				i++
				continue
			}
			e := end(i)
			if way[i].fn != prev {
				out = append(out, way[i])
				out = append(out, walk(i+1, e-1)...)
				if e-1 > i {
					out = append(out, way[e-1])
				}
			}
			prev = way[i].fn
			i = e
		}
		return out
	}
	return walk(0, len(way))
}

// A tally is what a way counts.
type tally struct {
	calls    int
	switches int      // changes of the running function's file
	returns  int      // switches into a file already left
	intoRapi int      // returns into a file of rapi
	upward   []string // calls from a lower package into a higher one
	files    []string // the files switched into, in order
	lines    []string // with -v: the way, marked
}

// short is a name without lmigo's module path.
func short(n string) string { return strings.TrimPrefix(base(n), mod) }

// rank orders lmigo's packages by layer: a call from a lower rank to a
// higher one is a call back up.
func rank(n string) int {
	p, _, _ := strings.Cut(short(n), ".")
	switch {
	case strings.HasPrefix(p, "internal/"):
		return 1
	case p == "rapi", p == "pool":
		return 2
	case p == "concurrent":
		return 3
	}
	return 4
}

// fileOf names the file of function n, or "?n" when the binary has none.
func fileOf(files map[string]string, n string) string {
	if f, ok := files[base(n)]; ok {
		return f
	}
	return "?" + short(n)
}

// tallyAll counts every call and return of a way: the file is the running
// function's, after a return its caller's.
func tallyAll(way []event, files map[string]string) tally {
	var t tally
	if len(way) == 0 {
		return t
	}
	cur := ""
	if way[0].caller != "" {
		cur = fileOf(files, way[0].caller)
	}
	left := map[string]bool{}
	for _, e := range way {
		next := cur
		if e.call {
			next = fileOf(files, e.fn)
			t.calls++
			if e.caller != "" && rank(e.fn) > rank(e.caller) {
				t.upward = append(t.upward, short(e.caller)+" -> "+short(e.fn))
			}
		} else if e.caller != "" {
			next = fileOf(files, e.caller)
		}
		if next == cur {
			continue
		}
		t.switches++
		if left[next] {
			t.returns++
			if strings.HasPrefix(next, "rapi/") {
				t.intoRapi++
			}
		}
		left[cur] = true
		cur = next
		if !slices.Contains(t.files, next) {
			t.files = append(t.files, next)
		}
	}
	return t
}

// tallyFirst counts the way as a reader reads it: each function once, in
// the order of its first call; a switch is a change of file from one
// function to the next. Defer wrappers (.deferwrapN) are the compiler's,
// not lines of source: coverage counts the defer statement, not them.
func tallyFirst(way []event, files map[string]string) tally {
	var t tally
	seen := map[string]bool{}
	left := map[string]bool{}
	cur := ""
	for _, e := range way {
		if !e.call || seen[e.fn] || strings.Contains(e.fn, ".deferwrap") {
			continue
		}
		seen[e.fn] = true
		t.calls++
		f := fileOf(files, e.fn)
		mark := "   "
		if t.calls > 1 && f != cur {
			t.switches++
			mark = "-> "
			if left[f] {
				mark = "<< "
				t.returns++
				if strings.HasPrefix(f, "rapi/") {
					t.intoRapi++
				}
			}
			left[cur] = true
		}
		cur = f
		t.lines = append(t.lines, mark+" "+f+" "+short(e.fn))
	}
	return t
}
