package rapi

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The package's files call down: a story file (conn.go) tells the
// exchange and calls the files below it, which never call back up. A file
// calls another when a declaration of one calls, or takes as a value, a
// function or method declared in the other; types, constants and
// variables are not calls. An interface method counts where the interface
// is declared, not where a type implements it.

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
	calls := fileCalls(t, ".")
	loops := callLoops(calls)
	pairs := mutualPairs(calls)
	for _, l := range loops {
		t.Logf("a loop of %d files: %s", len(l), strings.Join(l, " "))
	}
	t.Logf("%d pairs of files that call each other", len(pairs))
	for _, p := range pairs {
		t.Errorf("%s and %s call each other: %s; %s", p[0], p[1],
			strings.Join(calls[p[0]][p[1]], ", "), strings.Join(calls[p[1]][p[0]], ", "))
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
	for _, name := range packageFiles(t, ".") {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines, more than %d", name, n, maxFileLines)
		}
	}
}

// packageFiles are the package's Go files in dir for this platform, tests
// left out.
func packageFiles(t *testing.T, dir string) []string {
	t.Helper()
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(bp.GoFiles))
	for i, n := range bp.GoFiles {
		names[i] = filepath.Join(dir, n)
	}
	return names
}

// fileCalls type-checks the package in dir and returns, for each file, the
// files its declarations call, each with the names called there.
func fileCalls(t *testing.T, dir string) map[string]map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range packageFiles(t, dir) {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("rapi", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]map[string][]string{}
	for id, obj := range info.Uses {
		fn, ok := obj.(*types.Func)
		if !ok || fn.Pkg() != pkg {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(fn.Pos()).Filename)
		if from == to {
			continue
		}
		if calls[from] == nil {
			calls[from] = map[string][]string{}
		}
		if name := funcName(fn); !slices.Contains(calls[from][to], name) {
			calls[from][to] = append(calls[from][to], name)
		}
	}
	for _, to := range calls {
		for f := range to {
			slices.Sort(to[f])
		}
	}
	return calls
}

// funcName is fn as a reader finds it: T.m for a method.
func funcName(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return fn.Name()
	}
	recv := sig.Recv().Type()
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	if n, ok := recv.(*types.Named); ok {
		return n.Obj().Name() + "." + fn.Name()
	}
	return fmt.Sprintf("(%s).%s", recv, fn.Name())
}

// callLoops returns the loops of calls (strongly connected components of
// more than one file), each sorted, the largest first.
func callLoops(calls map[string]map[string][]string) [][]string {
	nodes := slices.Sorted(maps.Keys(calls))
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	var loops [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		on[v] = true
		for _, w := range slices.Sorted(maps.Keys(calls[v])) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var loop []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[w] = false
			loop = append(loop, w)
			if w == v {
				break
			}
		}
		if len(loop) > 1 {
			slices.Sort(loop)
			loops = append(loops, loop)
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	slices.SortStableFunc(loops, func(a, b []string) int { return len(b) - len(a) })
	return loops
}

// mutualPairs returns the pairs of files that call each other, sorted.
func mutualPairs(calls map[string]map[string][]string) [][2]string {
	var pairs [][2]string
	for a, to := range calls {
		for b := range to {
			if a < b && calls[b][a] != nil {
				pairs = append(pairs, [2]string{a, b})
			}
		}
	}
	slices.SortFunc(pairs, func(x, y [2]string) int { return strings.Compare(x[0]+" "+x[1], y[0]+" "+y[1]) })
	return pairs
}
