package filecalls

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Calls holds, for each file of a package (its base name), the files it
// calls, each with the names it calls there, sorted: T.m for a method.
type Calls map[string]map[string][]string

// Files returns the package's Go files in dir for this platform, tests
// left out.
func Files(dir string) ([]string, error) {
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(bp.GoFiles))
	for i, n := range bp.GoFiles {
		names[i] = filepath.Join(dir, n)
	}
	return names, nil
}

// Load type-checks the package in dir and returns how its files call
// each other.
func Load(dir string) (Calls, error) {
	names, err := Files(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	files := make([]*ast.File, 0, len(names))
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("filecalls: no Go files in %s", dir)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importerFor(fset, dir)}
	pkg, err := conf.Check(files[0].Name.Name, fset, files, info)
	if err != nil {
		return nil, err
	}
	calls := Calls{}
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
	return calls, nil
}

// importerFor imports what the package in dir imports from the export
// data that go list -export builds, or finds in the build cache: a package
// of large dependencies (an AWS SDK, a plotting library) is checked in a
// second where checking every import from source takes half a minute.
// Where the go command cannot say, imports are checked from source.
func importerFor(fset *token.FileSet, dir string) types.Importer {
	source := importer.ForCompiler(fset, "source", nil)
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Export", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return source
	}
	exports := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p struct{ ImportPath, Export string }
		if dec.Decode(&p) != nil {
			return source
		}
		exports[p.ImportPath] = p.Export
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f := exports[path]; f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("filecalls: no export data for %s", path)
	})
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

// Pair is two files that call each other, in name order.
type Pair [2]string

// String is the pair as a list in a doc names it: "a.go/b.go".
func (p Pair) String() string { return p[0] + "/" + p[1] }

// Pairs returns the pairs of files that call each other, sorted.
func (c Calls) Pairs() []Pair {
	var pairs []Pair
	for a, to := range c {
		for b := range to {
			if a < b && c[b][a] != nil {
				pairs = append(pairs, Pair{a, b})
			}
		}
	}
	slices.SortFunc(pairs, func(x, y Pair) int { return strings.Compare(x.String(), y.String()) })
	return pairs
}

// Why says what each file of p calls in the other.
func (c Calls) Why(p Pair) string {
	return fmt.Sprintf("%s calls %s; %s calls %s",
		p[0], strings.Join(c[p[0]][p[1]], ", "), p[1], strings.Join(c[p[1]][p[0]], ", "))
}

// Loops returns the loops of calls (the strongly connected components of
// more than one file), each sorted, the largest first.
func (c Calls) Loops() [][]string {
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
		for _, w := range slices.Sorted(maps.Keys(c[v])) {
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
	for _, v := range slices.Sorted(maps.Keys(c)) {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	slices.SortStableFunc(loops, func(a, b []string) int { return len(b) - len(a) })
	return loops
}
