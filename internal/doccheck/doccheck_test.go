package doccheck

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the module's directory, seen from this package's.
const root = "../.."

// TestDocCommentsBeginWithTheirName: the doc comment of every exported
// identifier of the module's packages begins with that identifier, so that
// a renamed or removed one cannot leave a comment naming another. Grouped
// constants and variables are covered by their group's comment, or by one
// of their own that begins with their name.
func TestDocCommentsBeginWithTheirName(t *testing.T) {
	dirs := packageDirs(t)
	if len(dirs) < 5 {
		t.Fatalf("found %d packages under %s: %v", len(dirs), root, dirs)
	}
	for _, dir := range dirs {
		pkg, _ := parsePackage(t, dir)
		if pkg == nil {
			continue
		}
		for _, p := range check(pkg) {
			t.Errorf("%s: %s", dir, p)
		}
	}
}

// TestDocCommentsNameWhatExists: what go doc shows of the module's
// packages names no unexported identifier of theirs (a camelCase one:
// lower-case words are English) and no member T.M of an exported type T
// that T does not have.
func TestDocCommentsNameWhatExists(t *testing.T) {
	for _, dir := range packageDirs(t) {
		pkg, files := parsePackage(t, dir)
		if pkg == nil {
			continue
		}
		for _, p := range checkNames(pkg, files) {
			t.Errorf("%s: %s", dir, p)
		}
	}
}

// packageDirs lists the directories of the module's packages: those with
// non-test Go files, outside testdata and the modules nested in this one.
func packageDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || hasFile(path, "go.mod")) {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); slices.ContainsFunc(files, isSource) {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func hasFile(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func isSource(name string) bool { return !strings.HasSuffix(name, "_test.go") }

// parsePackage reads the package in dir, or returns nil for a command.
func parsePackage(t *testing.T, dir string) (*doc.Package, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	// go/doc drops the unexported declarations from the files it is
	// given: it gets a second parse of its own.
	var files, forDoc []*ast.File
	for _, name := range names {
		if !isSource(name) {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" {
			return nil, nil
		}
		g, _ := parser.ParseFile(fset, name, nil, parser.ParseComments)
		files, forDoc = append(files, f), append(forDoc, g)
	}
	pkg, err := doc.NewFromFiles(fset, forDoc, dir)
	if err != nil {
		t.Fatal(err)
	}
	return pkg, files
}

// entry is one doc comment that go doc shows.
type entry struct {
	kind string // package, func, type, method, value; note for a line comment
	name string // the identifier it documents
	text string // "" when it has none
	// group is the comment of a grouped const or var declaration, which
	// covers a value that has none of its own.
	group string
}

// documented lists the doc comments of pkg that go doc shows, the
// package's first.
func documented(pkg *doc.Package) []entry {
	es := []entry{{kind: "package", name: "Package " + pkg.Name, text: pkg.Doc}}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				i := slices.IndexFunc(vs.Names, func(id *ast.Ident) bool { return id.IsExported() })
				if i < 0 {
					continue
				}
				e := entry{kind: "value", name: vs.Names[i].Name, text: vs.Doc.Text()}
				if v.Decl.Lparen.IsValid() {
					e.group = v.Doc
				} else if e.text == "" {
					e.text = v.Doc
				}
				es = append(es, e, entry{kind: "note", text: vs.Comment.Text()})
			}
		}
	}
	values(pkg.Consts)
	values(pkg.Vars)
	for _, f := range pkg.Funcs {
		es = append(es, entry{kind: "func", name: f.Name, text: f.Doc})
	}
	for _, typ := range pkg.Types {
		es = append(es, entry{kind: "type", name: typ.Name, text: typ.Doc})
		values(typ.Consts)
		values(typ.Vars)
		for _, f := range typ.Funcs {
			es = append(es, entry{kind: "func", name: f.Name, text: f.Doc})
		}
		for _, m := range typ.Methods {
			es = append(es, entry{kind: "method of " + typ.Name, name: m.Name, text: m.Doc})
		}
		for _, spec := range typ.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, field := range st.Fields.List {
				if len(field.Names) > 0 && field.Names[0].IsExported() {
					es = append(es, entry{kind: "note", text: field.Doc.Text()}, entry{kind: "note", text: field.Comment.Text()})
				}
			}
		}
	}
	return es
}

// check returns what is wrong with pkg's doc comments. A value is
// documented by the comment of its line, which begins with it, or, when
// its line has none, by its group's comment.
func check(pkg *doc.Package) []string {
	var bad []string
	for _, e := range documented(pkg) {
		switch {
		case e.kind == "note":
		case e.kind == "value" && e.text == "":
			if strings.TrimSpace(e.group) == "" {
				bad = append(bad, e.name+": no doc comment, of its own or of its group")
			}
		case !begins(e.text, e.name):
			bad = append(bad, e.kind+" "+e.name+": doc comment "+quote(e.text)+" does not begin with "+e.name)
		}
	}
	return bad
}

// begins reports whether text begins with name as a word of its own.
func begins(text, name string) bool {
	rest, ok := strings.CutPrefix(text, name)
	if !ok {
		return false
	}
	return rest == "" || strings.IndexAny(rest[:1], " \n:,.;(") == 0
}

func quote(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	if len(line) > 60 {
		line = line[:60] + "…"
	}
	return `"` + line + `"`
}

// checkNames returns the names that the exported doc comments of pkg cite
// and that go doc does not show: unexported camelCase identifiers, and
// members T.M of an exported type T that has none called M.
func checkNames(pkg *doc.Package, files []*ast.File) []string {
	unexported := map[string]bool{}
	exported := map[string]bool{}
	members := map[string]map[string]bool{} // exported type: its methods and fields
	embeds := map[string]bool{}             // exported types that embed another
	member := func(typ, name string) {
		if members[typ] == nil {
			members[typ] = map[string]bool{}
		}
		members[typ][name] = true
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				switch {
				case d.Recv != nil:
					member(recvName(d.Recv.List[0].Type), d.Name.Name)
				case d.Name.IsExported():
					exported[d.Name.Name] = true
				default:
					unexported[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						if !sp.Name.IsExported() {
							unexported[sp.Name.Name] = true
							continue
						}
						exported[sp.Name.Name] = true
						member(sp.Name.Name, "")
						if st, ok := sp.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								if len(field.Names) == 0 {
									embeds[sp.Name.Name] = true
								}
								for _, id := range field.Names {
									member(sp.Name.Name, id.Name)
								}
							}
						}
						if _, ok := sp.Type.(*ast.InterfaceType); ok {
							embeds[sp.Name.Name] = true // its methods are not FuncDecls
						}
					case *ast.ValueSpec:
						for _, id := range sp.Names {
							if id.IsExported() {
								exported[id.Name] = true
							} else {
								unexported[id.Name] = true
							}
						}
					}
				}
			}
		}
	}
	var texts []string
	for _, e := range documented(pkg) {
		texts = append(texts, e.text, e.group)
	}
	var bad []string
	seen := map[string]bool{}
	report := func(what string) {
		if !seen[what] {
			seen[what] = true
			bad = append(bad, what)
		}
	}
	for _, text := range texts {
		for _, word := range identifier.FindAllString(text, -1) {
			if unexported[word] && strings.ContainsFunc(word, unicode.IsUpper) {
				report("the docs name " + word + ", which go doc does not show")
			}
		}
		for _, m := range selector.FindAllStringSubmatch(text, -1) {
			typ, name := m[1], m[2]
			// Lambda's error types read Runtime.X: not concurrent.Runtime's.
			if typ != "Runtime" && members[typ] != nil && !members[typ][name] && !embeds[typ] {
				report("the docs name " + typ + "." + name + ", which " + typ + " does not have")
			}
		}
		for _, m := range sentinel.FindAllStringSubmatchIndex(text, -1) {
			word := text[m[2]:m[3]]
			if (m[2] == 0 || !strings.ContainsRune(`."`, rune(text[m[2]-1]))) && !exported[word] {
				report("the docs name " + word + ", which the package does not declare")
			}
		}
	}
	return bad
}

var (
	identifier = regexp.MustCompile(`\b[a-z][A-Za-z0-9]*\b`)
	selector   = regexp.MustCompile(`\b([A-Z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9]*)\b`)
	// sentinel matches the names of errors and options, which the docs
	// cite unqualified when they are the package's own (a quoted one is a
	// string of the platform's).
	sentinel = regexp.MustCompile(`\b((?:Err|With)[A-Z][A-Za-z0-9]*)\b`)
)

// recvName is the type name of a method's receiver.
func recvName(x ast.Expr) string {
	for {
		switch e := x.(type) {
		case *ast.StarExpr:
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.IndexListExpr:
			x = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// TestUnexportedDocCommentsBeginWithTheirName: a doc comment on an
// unexported function, method or type begins with its name, as an
// exported one's does: a comment left under a renamed one shows.
func TestUnexportedDocCommentsBeginWithTheirName(t *testing.T) {
	for _, dir := range packageDirs(t) {
		_, files := parsePackage(t, dir)
		for _, p := range checkUnexported(files) {
			t.Errorf("%s: %s", dir, p)
		}
	}
}

// checkUnexported returns the unexported functions, methods and types of
// files whose doc comment does not begin with their name.
func checkUnexported(files []*ast.File) []string {
	var bad []string
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				// Text is "" for a comment of directives alone (//go:noinline).
				if !d.Name.IsExported() && d.Doc.Text() != "" && !begins(d.Doc.Text(), d.Name.Name) {
					bad = append(bad, "func "+d.Name.Name+": doc comment "+quote(d.Doc.Text())+" does not begin with "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok || ts.Name.IsExported() {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					if doc.Text() != "" && !begins(doc.Text(), ts.Name.Name) {
						bad = append(bad, "type "+ts.Name.Name+": doc comment "+quote(doc.Text())+" does not begin with "+ts.Name.Name)
					}
				}
			}
		}
	}
	return bad
}
