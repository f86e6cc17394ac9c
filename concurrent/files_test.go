package concurrent

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/internal/filecalls"
)

// The package's files call down: runtime.go over the slot's story
// (slot.go) and the watches, over the files an invocation runs through.
// Where two files must call each other, docs/design.md lists the pair and
// says why: the test reads the list there, so that the two cannot drift.

// design is the page that lists the pairs, and pairsAnchor the command
// its paragraph before the list gives.
const (
	design      = "../docs/design.md"
	pairsAnchor = "go test -v -run TestFilesCallDown ./concurrent/"
)

// TestFilesCallDown: the only files of the package that call each other
// are the pairs docs/design.md lists, each pair listed still does, and no
// other loop of calls is. go test -v -run TestFilesCallDown ./concurrent/
// lists the loops and the pairs.
func TestFilesCallDown(t *testing.T) {
	calls, err := filecalls.Load(".")
	if err != nil {
		t.Fatal(err)
	}
	kept := keptPairs(t)
	for _, l := range calls.Loops() {
		t.Logf("a loop of %d files: %s", len(l), strings.Join(l, " "))
		// A pair kept is a loop of two; any other loop calls back up.
		if len(l) != 2 || !kept[filecalls.Pair{l[0], l[1]}] {
			t.Errorf("a loop of calls spans %d files: %s", len(l), strings.Join(l, " "))
		}
	}
	pairs := calls.Pairs()
	t.Logf("%d pairs of files that call each other, %d kept in %s", len(pairs), len(kept), design)
	for _, p := range pairs {
		if !kept[p] {
			t.Errorf("%s and %s call each other, and %s does not say why: %s", p[0], p[1], design, calls.Why(p))
		}
		delete(kept, p)
	}
	for p := range kept {
		t.Errorf("%s lists %s and %s, which no longer call each other", design, p[0], p[1])
	}
}

// keptPair is a line of the list: - `a.go` and `b.go`: why.
var keptPair = regexp.MustCompile("^- `([a-z0-9_]+\\.go)` and `([a-z0-9_]+\\.go)`: .+")

// keptPairs reads the list of pairs in docs/design.md: the list right
// after the paragraph that gives pairsAnchor, or none if another
// paragraph follows it.
func keptPairs(t *testing.T) map[filecalls.Pair]bool {
	t.Helper()
	b, err := os.ReadFile(design)
	if err != nil {
		t.Fatal(err)
	}
	_, after, found := strings.Cut(string(b), pairsAnchor)
	if !found {
		t.Fatalf("%s does not give %q before its list of pairs", design, pairsAnchor)
	}
	kept := map[filecalls.Pair]bool{}
	blank, list := false, false
	for line := range strings.Lines(after) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "- "):
			list = true
			m := keptPair.FindStringSubmatch(line)
			if m == nil || m[1] >= m[2] {
				t.Fatalf("%s: a pair in the list is not \"- `a.go` and `b.go`: why\", in name order: %s", design, line)
			}
			kept[filecalls.Pair{m[1], m[2]}] = true
		case list && strings.HasPrefix(line, "  "): // the item goes on
		case list || blank && line != "":
			return kept // the list ended, or another paragraph came instead
		case line == "":
			blank = true
		}
	}
	return kept
}
