package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// mod is lmigo's module path; names are shown without it.
const mod = "github.com/lmigo/lmigo/"

// An event is one line of a dlv trace: a function called or returning on a
// goroutine.
type event struct {
	g      string // the goroutine's id
	call   bool   // a call; else a return
	fn     string // the function, without generic brackets
	caller string // the function below on g's stack after the event, "" if none
}

// base strips generic brackets: one name for every instantiation, as a
// reader of the source sees it.
func base(name string) string {
	var b strings.Builder
	depth := 0
	for _, r := range name {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// funcName is the function's name at the start of s, up to its arguments
// (a call) or " => " (a return). A '(' right after a '.' opens a receiver
// and belongs to the name; any other '(' outside brackets ends it.
func funcName(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '(':
			if depth > 0 {
				continue
			}
			if i == 0 || s[i-1] != '.' {
				return s[:i]
			}
			// Skip the receiver, brackets and parentheses inside it included.
			for n := 0; i < len(s); i++ {
				if s[i] == '(' {
					n++
				} else if s[i] == ')' {
					if n--; n == 0 {
						break
					}
				}
			}
		case ' ':
			if depth == 0 && strings.HasPrefix(s[i:], " => ") {
				return s[:i]
			}
		}
	}
	return s
}

var traceLine = regexp.MustCompile(`^(>>?) goroutine\((\d+)\): (.*)$`)

// parseTrace reads dlv trace's output: "> goroutine(G): F(args)" for a call,
// ">> goroutine(G): F => (results)" for a return; other lines (the
// program's own output) are skipped. It keeps each goroutine's stack to
// name the caller.
func parseTrace(r io.Reader) ([]event, error) {
	stacks := map[string][]string{}
	var events []event
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if m := traceLine.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			g, fn := m[2], base(funcName(m[3]))
			st := stacks[g]
			if m[1] == ">" {
				events = append(events, event{g: g, call: true, fn: fn, caller: top(st)})
				st = append(st, fn)
			} else {
				// Unwind to the returning function: a call or return dlv
				// missed must not shift every caller after it.
				for i := len(st) - 1; i >= 0; i-- {
					if st[i] == fn {
						st = st[:i]
						break
					}
				}
				events = append(events, event{g: g, fn: fn, caller: top(st)})
			}
			stacks[g] = st
		}
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func top(st []string) string {
	if len(st) == 0 {
		return ""
	}
	return st[len(st)-1]
}

// symbols reads go tool nm's output: the address of each text symbol of
// lmigo and of the main package, by name without generic brackets.
func symbols(nm string) (names, addrs []string) {
	seen := map[string]int{}
	for line := range strings.Lines(nm) {
		f := strings.SplitN(strings.TrimSpace(line), " ", 3)
		if len(f) != 3 || f[1] != "T" {
			continue
		}
		if !strings.HasPrefix(f[2], mod) && !strings.HasPrefix(f[2], "main.") {
			continue
		}
		n := base(f[2])
		// Instantiations share a name and a file: keep one.
		if i, ok := seen[n]; ok {
			addrs[i] = f[0]
			continue
		}
		seen[n] = len(names)
		names = append(names, n)
		addrs = append(addrs, f[0])
	}
	return names, addrs
}

// files reads go tool addr2line's output for names, two lines each
// (function, file:line), into the file of each function: relative to tree
// when inside it, else the file's base name.
func files(names []string, a2l, tree string) (map[string]string, error) {
	lines := strings.Split(strings.TrimSuffix(a2l, "\n"), "\n")
	if len(lines) != 2*len(names) {
		return nil, fmt.Errorf("addr2line: %d lines for %d symbols", len(lines), len(names))
	}
	out := make(map[string]string, len(names))
	for i, n := range names {
		path := lines[2*i+1]
		if j := strings.LastIndexByte(path, ':'); j >= 0 {
			path = path[:j]
		}
		rel, err := filepath.Rel(tree, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Base(path)
		}
		out[n] = filepath.ToSlash(rel)
	}
	return out, nil
}
