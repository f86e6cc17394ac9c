package rapi

import (
	"os"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/internal/filecalls"
)

// The package's files call down: a story file (conn.go) tells the
// exchange and calls the files below it, which never call back up. What
// counts as a call is filecalls' measure.

const (
	// maxLoop is the most files a loop of calls may span.
	maxLoop = 3
	// maxFileLines bounds each file of the package but its tests.
	maxFileLines = 600
)

// TestFilesCallDown: no two files of the package call each other, and no
// loop of calls spans more than maxLoop files. go test -v -run
// TestFilesCallDown ./rapi/ lists the loops and the pairs.
func TestFilesCallDown(t *testing.T) {
	calls, err := filecalls.Load(".")
	if err != nil {
		t.Fatal(err)
	}
	loops := calls.Loops()
	pairs := calls.Pairs()
	for _, l := range loops {
		t.Logf("a loop of %d files: %s", len(l), strings.Join(l, " "))
	}
	t.Logf("%d pairs of files that call each other", len(pairs))
	for _, p := range pairs {
		t.Errorf("%s and %s call each other: %s", p[0], p[1], calls.Why(p))
	}
	for _, l := range loops {
		if len(l) > maxLoop {
			t.Errorf("a loop of calls spans %d files, more than %d: %s", len(l), maxLoop, strings.Join(l, " "))
		}
	}
}

// TestFileLength: no file of the package but its tests is over
// maxFileLines lines.
func TestFileLength(t *testing.T) {
	names, err := filecalls.Files(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines, more than %d", name, n, maxFileLines)
		}
	}
}
