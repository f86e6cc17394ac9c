package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// repoRoot is the repository's root, from this package's directory: the
// docs' commands run from there.
const repoRoot = "../.."

// userFn is the main package of the user's module the docs' examples
// use. A command that names it runs in TestNewUserModule's new module,
// not in this repository.
const userFn = "./cmd/myfn"

// docBlock is a fenced code block of a Markdown file.
type docBlock struct {
	lang string
	line int // of the first line inside the fence
	text string
}

// docCommand is one shell command of the docs: from a ```sh block (one
// per line, continuations joined, split at ; && || and |) or an inline
// code span that begins with "go " or "make ".
type docCommand struct {
	file string
	line int
	text string   // the command as the docs write it
	env  []string // NAME=value words before it
	args []string // its words, the program first
}

func (c docCommand) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

// docFiles are the repository's Markdown files, relative to the root;
// reports written by the load test (out/) are not docs.
func docFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "out" || d.Name() == "testdata" || d.Name() == "dist" || strings.HasPrefix(d.Name(), ".")) && p != repoRoot {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// markdown splits a Markdown text into its fenced blocks and its
// paragraphs outside them (inline code lives there, and may run over a
// line break), each with its line number.
func markdown(text string) (blocks []docBlock, paras []docBlock) {
	var cur *docBlock
	var body, para []string
	paraLine := 0
	endPara := func() {
		if len(para) > 0 {
			paras = append(paras, docBlock{line: paraLine, text: strings.Join(para, " ")})
		}
		para = nil
	}
	for i, l := range strings.Split(text, "\n") {
		n := i + 1
		if strings.HasPrefix(l, "```") {
			if cur == nil {
				endPara()
				cur = &docBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: n + 1}
				body = body[:0]
				continue
			}
			cur.text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		switch {
		case cur != nil:
			body = append(body, l)
		case strings.TrimSpace(l) == "":
			endPara()
		default:
			if len(para) == 0 {
				paraLine = n
			}
			para = append(para, strings.TrimSpace(l))
		}
	}
	endPara()
	return blocks, paras
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// docCommands finds every shell command of the docs.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	var cmds []docCommand
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks, paras := markdown(string(b))
		for _, bl := range blocks {
			if bl.lang != "sh" && bl.lang != "bash" && bl.lang != "shell" {
				continue
			}
			lines := strings.Split(bl.text, "\n")
			for i := 0; i < len(lines); i++ {
				n, l := bl.line+i, lines[i]
				for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
					i++
					l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(lines[i])
				}
				for _, words := range shellWords(l) {
					if c := newDocCommand(f, n, words); len(c.args) > 0 {
						cmds = append(cmds, c)
					}
				}
			}
		}
		for _, p := range paras {
			cmds = append(cmds, inlineCommands(f, p)...)
		}
	}
	return cmds
}

// inlineCommands are the commands in the inline code of paragraph p of
// file: inline code is a command when it begins with one.
func inlineCommands(file string, p docBlock) []docCommand {
	var cmds []docCommand
	for _, m := range inlineCode.FindAllStringSubmatch(p.text, -1) {
		for _, words := range shellWords(m[1]) {
			if c := newDocCommand(file, p.line, words); len(c.args) > 1 && (c.args[0] == "go" || c.args[0] == "make") {
				cmds = append(cmds, c)
			}
		}
	}
	return cmds
}

var envWord = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// newDocCommand takes apart what comes before the program: NAME=value
// words, and the words that run a command (flock FILE, time, do, then).
func newDocCommand(file string, line int, words []string) docCommand {
	c := docCommand{file: file, line: line, text: strings.Join(words, " ")}
	for len(words) > 0 {
		w := words[0]
		switch {
		case w == "flock" && len(words) > 1:
			words = words[2:]
			continue
		case w == "time" || w == "do" || w == "then":
			words = words[1:]
			continue
		case envWord.MatchString(w):
			c.env = append(c.env, w)
			words = words[1:]
			continue
		}
		break
	}
	c.args = words
	return c
}

// shellWords splits a line of shell into commands and each into words:
// quotes kept together and removed, a comment dropped, commands split at
// ; && || and |, redirections dropped.
func shellWords(line string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, quote := false, byte(0)
	end := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	endCmd := func() {
		end()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '#' && !inWord:
			i = len(line)
		case c == ' ' || c == '\t':
			end()
		case c == ';' || c == '|' || c == '&':
			endCmd()
			if i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') {
				i++
			}
		case c == '>' || c == '<':
			end()
			// The file name after the redirection goes with it.
			for i+1 < len(line) && line[i+1] == ' ' {
				i++
			}
			for i+1 < len(line) && line[i+1] != ' ' && line[i+1] != ';' {
				i++
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// flagSpec is what a program's -h says: its flags, each with the type of
// its value ("" for a boolean).
type flagSpec map[string]string

var flagLine = regexp.MustCompile(`^\s+-([A-Za-z0-9][A-Za-z0-9_.-]*)(?: (\S+))?`)

// docChecker checks commands against this repository, building each
// program a command runs once.
type docChecker struct {
	t     *testing.T
	root  string
	tmp   string
	bins  map[string]string   // package directory -> binary
	specs map[string]flagSpec // binary + subcommand -> flags
	ran   map[string]error    // commands run with -n, by text
}

// absRoot is the repository's root, absolute.
func absRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func newDocChecker(t *testing.T) *docChecker {
	return &docChecker{t: t, root: absRoot(t), tmp: t.TempDir(), bins: map[string]string{}, specs: map[string]flagSpec{}, ran: map[string]error{}}
}

// program builds the main package pkg, resolved in dir, and returns the
// binary and the package's directory relative to the root.
func (d *docChecker) program(dir, pkg string) (bin, rel string, err error) {
	out, err := d.goOut(dir, nil, "list", "-f", "{{.Name}} {{.Dir}}", pkg)
	if err != nil {
		return "", "", err
	}
	name, pdir, _ := strings.Cut(strings.TrimSpace(out), " ")
	if name != "main" {
		return "", "", fmt.Errorf("%s is package %s, not a command", pkg, name)
	}
	rel, _ = filepath.Rel(d.root, pdir)
	if b, ok := d.bins[pdir]; ok {
		return b, rel, nil
	}
	bin = filepath.Join(d.tmp, strconv.Itoa(len(d.bins)), filepath.Base(pdir))
	if _, err := d.goOut(pdir, nil, "build", "-o", bin, "."); err != nil {
		return "", "", err
	}
	d.bins[pdir] = bin
	return bin, rel, nil
}

// hostEnv is the environment of a command of the docs: the host's
// platform, whatever GOOS and GOARCH this test was built for (make
// test-arm64 runs it under qemu-user), and host binaries run as they are.
func hostEnv() []string { return append(os.Environ(), "GOOS=", "GOARCH=", "LMIGO_RIE_EXEC=") }

// goOut runs the go command in dir and returns its output.
func (d *docChecker) goOut(dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(d.t.Context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(hostEnv(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// spec reads the flags of bin (and its subcommand sub) from its -h.
func (d *docChecker) spec(bin, sub string) (flagSpec, error) {
	key := bin + " " + sub
	if s, ok := d.specs[key]; ok {
		return s, nil
	}
	args := []string{"-h"}
	if sub != "" {
		args = []string{sub, "-h"}
	}
	out, err := exec.CommandContext(d.t.Context(), bin, args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	s := flagSpec{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := flagLine.FindStringSubmatch(sc.Text()); m != nil {
			s[m[1]] = m[2]
		}
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%s %s lists no flags:\n%s", filepath.Base(bin), strings.Join(args, " "), out)
	}
	d.specs[key] = s
	return s, nil
}

// args checks a program's arguments: the subcommand, when the program has
// them, every flag, and at most positional arguments after them (any
// number when it is below 0), then lets the program itself parse them up
// to -h (which ends it before it does anything). "..." stands for more.
func (d *docChecker) args(bin string, subcommands bool, positional int, args []string) error {
	sub := ""
	if subcommands {
		if len(args) == 0 {
			return nil
		}
		sub, args = args[0], args[1:]
		if sub == "..." {
			return nil
		}
	}
	spec, err := d.spec(bin, sub)
	if err != nil {
		return err
	}
	var flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "..." {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if rest := len(args) - i; positional >= 0 && rest > positional && args[len(args)-1] != "..." {
				return fmt.Errorf("%d argument(s) %q after the flags, the program takes %d", rest, args[i:], positional)
			}
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			return nil // the program's usage
		}
		typ, ok := spec[name]
		if !ok {
			return fmt.Errorf("flag -%s: not a flag of %s %s", name, filepath.Base(bin), sub)
		}
		flags = append(flags, a)
		if typ != "" && !hasValue {
			if i+1 >= len(args) {
				return fmt.Errorf("flag -%s: no value", name)
			}
			i++
			flags = append(flags, args[i])
		}
	}
	run := append([]string{}, flags...)
	if sub != "" {
		run = append([]string{sub}, run...)
	}
	run = append(run, "-h")
	if out, err := exec.CommandContext(d.t.Context(), bin, run...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(run, " "), err, lastLines(out, 5))
	}
	return nil
}

func lastLines(b []byte, n int) string {
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// lmigoPath is the directory of a package or module path of this
// repository, "" for another's.
func lmigoPath(p string) (string, bool) {
	p, _, _ = strings.Cut(p, "@")
	if p == lmigoModule {
		return ".", true
	}
	rest, ok := strings.CutPrefix(p, lmigoModule+"/")
	return rest, ok
}

// userModule checks the words of a command run in a user's module (go
// get, go mod edit): the lmigo paths they name exist, and a replacement
// by a checkout at ../lmigo names the directory of that very module.
func (d *docChecker) userModule(args []string) error {
	for _, a := range args {
		for _, part := range strings.Split(strings.TrimLeft(a, "-"), ",") {
			for _, w := range strings.Split(part, "=") {
				dir, ok := lmigoPath(w)
				if !ok {
					continue
				}
				if _, err := os.Stat(filepath.Join(d.root, dir)); err != nil {
					return fmt.Errorf("%s: no such package or module here", w)
				}
			}
			old, checkout, ok := strings.Cut(strings.TrimPrefix(part, "replace="), "=")
			if !strings.HasPrefix(part, "replace=") || !ok {
				continue
			}
			dir, ok := strings.CutPrefix(checkout, "../lmigo")
			if !ok {
				return fmt.Errorf("%s: replaced by %s, not by the checkout at ../lmigo", old, checkout)
			}
			mod, err := os.ReadFile(filepath.Join(d.root, dir, "go.mod"))
			if err != nil || !bytes.HasPrefix(mod, []byte("module "+old+"\n")) {
				return fmt.Errorf("%s: ../lmigo%s is not its module (%v)", old, dir, err)
			}
		}
	}
	return nil
}

// check parses one command as far as can be done without running it.
func (d *docChecker) check(c docCommand) (kind string, err error) {
	args := c.args
	if strings.Contains(c.text, userFn) {
		return "user", nil // TestNewUserModule runs it
	}
	switch args[0] {
	case "make":
		out, err := exec.CommandContext(d.t.Context(), "make", append([]string{"-n", "-C", d.root}, args[1:]...)...).CombinedOutput()
		if err != nil {
			return "make", fmt.Errorf("make -n: %v\n%s", err, lastLines(out, 5))
		}
		return "make", nil
	case "./loadtest":
		bin, _, err := d.program(filepath.Join(d.root, "loadtest"), ".")
		if err != nil {
			return "loadtest", err
		}
		return "loadtest", d.args(bin, true, 0, args[1:])
	case "go":
	default:
		return "other", nil
	}
	dir := d.root
	args = args[1:]
	if len(args) >= 2 && args[0] == "-C" {
		dir = filepath.Join(d.root, args[1])
		args = args[2:]
	}
	if len(args) == 0 {
		return "go", nil
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "run":
		pkg := ""
		for i, a := range args {
			if !strings.HasPrefix(a, "-") {
				pkg, args = a, args[i+1:]
				break
			}
		}
		if pkg == "" || pkg == "..." {
			return "go", nil
		}
		if _, ok := lmigoPath(pkg); !ok && !strings.HasPrefix(pkg, ".") {
			return "go", fmt.Errorf("go run %s: not a command of this repository", pkg)
		}
		bin, rel, err := d.program(dir, pkg)
		if err != nil {
			return "go", err
		}
		switch rel {
		case "loadtest":
			return "go", d.args(bin, true, 0, args)
		case "cmd/lmigo-pack":
			return "go", d.args(bin, false, -1, args) // packages, any number
		}
		return "go", d.args(bin, false, 1, args)
	case "tool":
		if len(args) == 0 {
			return "go", nil
		}
		if args[0] != "lmigo-pack" {
			// One of the Go distribution's (go tool pack): -n prints its path.
			_, err := d.goOut(dir, nil, "tool", "-n", args[0])
			return "go", err
		}
		bin, _, err := d.program(d.root, "./cmd/lmigo-pack")
		if err != nil {
			return "go", err
		}
		return "go", d.args(bin, false, -1, args[1:])
	case "test", "build", "vet":
		// -n prints what would run and runs nothing: flags and packages
		// are checked.
		key := dir + "\x00" + strings.Join(c.env, " ") + "\x00" + strings.Join(c.args, " ")
		if err, ok := d.ran[key]; ok {
			return "go", err
		}
		_, err := d.goOut(dir, c.env, append([]string{sub, "-n"}, args...)...)
		d.ran[key] = err
		return "go", err
	case "list", "version", "env", "doc":
		_, err := d.goOut(dir, c.env, append([]string{sub}, args...)...)
		return "go", err
	case "get", "mod", "install":
		return "go", d.userModule(args)
	}
	return "go", fmt.Errorf("go %s: not checked here; teach TestDocsCommands", sub)
}

// TestDocsCommands: every go and make command of the docs (```sh blocks
// and inline code) parses as it is written, from the repository's root:
// make targets with make -n; go test, build and vet with -n; the commands
// run by go run or go tool, and the built load test, by their flags (each
// program parses them, up to -h); lmigo paths in go get and go mod edit
// exist. Commands in a user's module (naming ./cmd/myfn) run in
// TestNewUserModule.
func TestDocsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command for each command of the docs")
	}
	d := newDocChecker(t)
	counts := map[string]int{}
	start := time.Now()
	for _, c := range docCommands(t) {
		kind, err := d.check(c)
		counts[kind]++
		if err != nil {
			t.Errorf("%s\n\t%v", c, err)
		}
	}
	t.Logf("commands of the docs: %d make, %d go, %d of the built load test, %d in a user's module (TestNewUserModule), %d others not checked (sam, aws, ssh, ...), in %s",
		counts["make"], counts["go"], counts["loadtest"], counts["user"], counts["other"], time.Since(start).Round(time.Second))
}

// TestDocCheckerRejects: the check of TestDocsCommands fails a command
// that does not run as written, and passes one that does.
func TestDocCheckerRejects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the load test")
	}
	d := newDocChecker(t)
	tests := []struct {
		line string
		ok   bool
	}{
		{"make run", true},
		{"make no-such-target", false},
		{"go -C loadtest run . compare -reps 5 -scenario tiny-n1 -duration 1500ms", true},
		{"go -C loadtest run . run ...", true},
		{"go run ./loadtest compare", false},
		{"go -C loadtest run . compare -no-such-flag", false},
		{"go -C loadtest run . compare -reps five", false},
		{"go -C loadtest run . compare -duration 5", false},
		{"go -C loadtest run . compare extra", false},
		{"go -C loadtest run . no-such-command", false},
		{"./loadtest run -n 8 -model open", true},
		{"go test -run '^$' -bench 'Response|Request' ./concurrent/", true},
		{"go test ./no/such/package", false},
		{"GOARCH=arm64 go build ./cmd/bootstrap", true},
		{"go tool lmigo-pack -o dist -arch arm64 ./cmd/x", true},
		{"go tool lmigo-pack -bogus ./cmd/x", false},
		{"go tool lmigo-pack -o dist ./cmd/x ./cmd/y", true},
		{"go run ./cmd/lmigo-pack -o dist ./cmd/x ./cmd/y", true},
		{"go tool pack", true},
		{"go tool no-such-tool", false},
		{"go mod edit -replace=github.com/lmigo/lmigo/concurrent/oteltrace=../lmigo/concurrent/oteltrace", true},
		{"go mod edit -replace=github.com/lmigo/lmigo/concurrent/oteltrace=../lmigo/concurrent/codec/sonic", false},
		{"go mod edit -replace=github.com/lmigo/lmigo=../elsewhere", false},
		{"go get github.com/lmigo/lmigo/no/such@v0.1.0", false},
	}
	for _, tt := range tests {
		words := shellWords(tt.line)
		if len(words) != 1 {
			t.Fatalf("%q: %d commands", tt.line, len(words))
		}
		_, err := d.check(newDocCommand("test", 1, words[0]))
		if (err == nil) != tt.ok {
			t.Errorf("%s: error %v, want ok=%v", tt.line, err, tt.ok)
		}
	}
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		line string
		want [][]string
	}{
		{`go test -run '^$' -bench "A|B" ./x/   # a comment`, [][]string{{"go", "test", "-run", "^$", "-bench", "A|B", "./x/"}}},
		{`cd lt && ./loadtest compare -n 1`, [][]string{{"cd", "lt"}, {"./loadtest", "compare", "-n", "1"}}},
		{`/tmp/c.test -test.count 6 > bench.txt; benchstat b.txt`, [][]string{{"/tmp/c.test", "-test.count", "6"}, {"benchstat", "b.txt"}}},
		{`-ldflags='-s -w' x`, [][]string{{"-ldflags=-s -w", "x"}}},
	}
	for _, tt := range tests {
		if got := shellWords(tt.line); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("shellWords(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// mdLink is a Markdown link or image: [text](target), the target up to
// a space (a title may follow it).
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)[^)]*\)`)

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lowercase, punctuation but - and _ dropped, each space a hyphen,
// a repeated one numbered (-1, -2, ...).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		h := strings.TrimLeft(l, "#")
		if fenced || h == l || !strings.HasPrefix(h, " ") {
			continue
		}
		// A link in a heading counts by its text.
		h = mdLink.ReplaceAllStringFunc(h, func(s string) string {
			return s[strings.Index(s, "[")+1 : strings.Index(s, "]")]
		})
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// brokenLinks checks the links of the Markdown texts, by path from the
// repository's root: each names a file that exists, and each anchor into
// one of texts a heading of it. Links to other sites are not followed.
func brokenLinks(texts map[string]string, exists func(path string) bool) (broken []string, links int) {
	for _, f := range slices.Sorted(maps.Keys(texts)) {
		_, paras := markdown(texts[f])
		for _, p := range paras {
			// Code spans are not links, whatever their brackets.
			text := inlineCode.ReplaceAllString(p.text, "")
			for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
					if !exists(dest) {
						broken = append(broken, fmt.Sprintf("%s:%d: link %s: no file %s", f, p.line, target, dest))
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if !anchors(texts[dest])[anchor] {
					broken = append(broken, fmt.Sprintf("%s:%d: link %s: no heading of %s has the anchor #%s", f, p.line, target, dest, anchor))
				}
			}
		}
	}
	return broken, links
}

// TestDocsLinks: every link of the docs to a file of the repository finds
// it, and every anchor a heading of the Markdown file it points into.
func TestDocsLinks(t *testing.T) {
	texts := map[string]string{}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	broken, links := brokenLinks(texts, func(p string) bool {
		_, err := os.Stat(filepath.Join(repoRoot, p))
		return err == nil
	})
	for _, b := range broken {
		t.Error(b)
	}
	t.Logf("%d links to files of the repository, in %d files", links, len(texts))
}

// TestDocsLinksRejects: the check of TestDocsLinks finds a link to a file
// or a heading that is not there, and names GitHub's anchors as GitHub
// does.
func TestDocsLinksRejects(t *testing.T) {
	texts := map[string]string{
		"README.md": "# lmigo\n\n## Testing your function\n\n## Zips: `lmigo-pack`\n\n## /tmp is shared\n\n## Notes\n\n## Notes\n\n" +
			"```sh\n# not a heading\n```\n",
		"docs/a.md": "[ok](../README.md#testing-your-function), [ok](../README.md#zips-lmigo-pack), " +
			"[ok](../README.md#tmp-is-shared), [ok](../README.md#notes-1), [ok](#here), [ok](https://example.com/x#y), " +
			"`[not a link](nowhere.md)`\n\n## Here\n\n" +
			"[bad](../README.md#testing-your-handlers) [bad](../README.md#not-a-heading) [bad](missing.md) [bad](#there)\n",
	}
	broken, links := brokenLinks(texts, func(p string) bool { _, ok := texts[p]; return ok })
	want := []string{
		"docs/a.md:5: link ../README.md#testing-your-handlers: no heading of README.md has the anchor #testing-your-handlers",
		"docs/a.md:5: link ../README.md#not-a-heading: no heading of README.md has the anchor #not-a-heading",
		"docs/a.md:5: link missing.md: no file docs/missing.md",
		"docs/a.md:5: link #there: no heading of docs/a.md has the anchor #there",
	}
	if !slices.Equal(broken, want) || links != 9 {
		t.Errorf("%d links, broken:\n%s\nwant:\n%s", links, strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
}
