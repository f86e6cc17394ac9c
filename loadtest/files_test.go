package main

import (
	"strings"
	"testing"

	"github.com/lmigo/lmigo/internal/filecalls"
)

// callDown are the load test's packages held to the rule of the house: a
// file calls the files below it, never back up. What counts as a call is
// filecalls' measure.
var callDown = []string{".", "bench", "load", "measure", "report", "show", "sizing", "soak", "target"}

// TestFilesCallDown: in the commands and in each package below them, no
// two files call each other, and no loop of calls spans files. go test -v
// -run TestFilesCallDown ./ lists the loops and the pairs of each.
func TestFilesCallDown(t *testing.T) {
	for _, dir := range callDown {
		calls, err := filecalls.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		loops, pairs := calls.Loops(), calls.Pairs()
		for _, l := range loops {
			t.Logf("%s: a loop of %d files: %s", dir, len(l), strings.Join(l, " "))
		}
		t.Logf("%s: %d pairs of files that call each other", dir, len(pairs))
		for _, p := range pairs {
			t.Errorf("%s: %s and %s call each other: %s", dir, p[0], p[1], calls.Why(p))
		}
		if len(loops) > 0 {
			t.Errorf("%s: %d loops of calls", dir, len(loops))
		}
	}
}
