package filecalls

import (
	"path/filepath"
	"reflect"
	"testing"
)

// known is testdata/calls, whose shape its doc comment gives.
const known = "testdata/calls"

// TestLoad: every call between files of the known package is found, with
// the names called, and nothing from its test file or a file built for
// no platform.
func TestLoad(t *testing.T) {
	calls, err := Load(known)
	if err != nil {
		t.Fatal(err)
	}
	want := Calls{
		"a.go": {"b.go": {"B"}, "leaf.go": {"leaf"}},
		"b.go": {"a.go": {"A"}, "leaf.go": {"T.Get"}},
		"c.go": {"d.go": {"D"}},
		"d.go": {"e.go": {"E"}},
		"e.go": {"c.go": {"C"}, "leaf.go": {"Getter.Get"}},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("Load(%s) = %v, want %v", known, calls, want)
	}
}

// TestPairsAndLoops: the known pair, and the known loops, the largest
// first.
func TestPairsAndLoops(t *testing.T) {
	calls, err := Load(known)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := calls.Pairs(), []Pair{{"a.go", "b.go"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Pairs() = %v, want %v", got, want)
	}
	if got, want := calls.Why(Pair{"a.go", "b.go"}), "a.go calls B; b.go calls A"; got != want {
		t.Errorf("Why = %q, want %q", got, want)
	}
	want := [][]string{{"c.go", "d.go", "e.go"}, {"a.go", "b.go"}}
	if got := calls.Loops(); !reflect.DeepEqual(got, want) {
		t.Errorf("Loops() = %v, want %v", got, want)
	}
}

// TestFiles: the package's files for this platform, its tests and
// ignored files left out.
func TestFiles(t *testing.T) {
	got, err := Files(known)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range []string{"a.go", "b.go", "c.go", "d.go", "e.go", "leaf.go"} {
		want = append(want, filepath.Join(known, n))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Files(%s) = %v, want %v", known, got, want)
	}
}

// TestLoadFails: a directory with no package is an error, not an empty
// graph that would pass every check.
func TestLoadFails(t *testing.T) {
	if _, err := Load(filepath.Join(known, "none")); err == nil {
		t.Error("Load of a missing directory returned no error")
	}
}
