package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// allowedModules are the only modules the runtime's go.mod, and the go.mod
// of a function that uses it, may require: what a bootstrap links, what
// those need, and goleak for tests. Tooling and the JSON codecs are
// modules of their own (DESIGN.md).
var allowedModules = map[string]string{
	"github.com/aws/aws-lambda-go":      "the handler forms, events and lambdacontext users move from",
	"go.uber.org/zap":                   "the logger: Lambda's JSON lines, one locked write each",
	"github.com/panjf2000/ants/v2":      "pool.Workers, the bounded worker pool",
	"github.com/valyala/bytebufferpool": "pool.Buffers and the response Buffer",
	"go.uber.org/goleak":                "tests only: every package that starts goroutines",
	"go.uber.org/multierr":              "zap's",
	"golang.org/x/sync":                 "ants'",
	"github.com/stretchr/testify":       "the tests of aws-lambda-go, ants, zap and goleak: tidy keeps it for them",
}

const lmigoModule = "github.com/lmigo/lmigo"

// requires lists the modules the go.mod in dir requires.
func requires(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	var mod struct{ Require []struct{ Path string } }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, len(mod.Require))
	for i, r := range mod.Require {
		paths[i] = r.Path
	}
	return paths
}

// TestRuntimeModuleRequires: the runtime's module requires only what a
// bootstrap links (allowedModules).
func TestRuntimeModuleRequires(t *testing.T) {
	for _, m := range requires(t, repoRoot) {
		if _, ok := allowedModules[m]; !ok {
			t.Errorf("go.mod requires %s, which a bootstrap does not link: move what needs it into a module of its own, or justify it in allowedModules", m)
		}
	}
}

// readmeGo returns the Go file of the README's that contains marker.
func readmeGo(t *testing.T, readme, marker string) string {
	t.Helper()
	blocks, _ := markdown(readme)
	for _, b := range blocks {
		if b.lang == "go" && strings.Contains(b.text, "package main") && strings.Contains(b.text, marker) {
			return b.text + "\n"
		}
	}
	t.Fatalf("README.md has no Go file with %q", marker)
	return ""
}

// readmeCommands returns the commands of the README's sh block that
// contains marker.
func readmeCommands(t *testing.T, readme, marker string) []docCommand {
	t.Helper()
	blocks, _ := markdown(readme)
	for _, b := range blocks {
		if b.lang != "sh" || !strings.Contains(b.text, marker) {
			continue
		}
		var cmds []docCommand
		for _, l := range strings.Split(b.text, "\n") {
			for _, words := range shellWords(l) {
				cmds = append(cmds, newDocCommand("README.md", b.line, words))
			}
		}
		return cmds
	}
	t.Fatalf("README.md has no sh block with %q", marker)
	return nil
}

// afterTests begins the README's paragraph on what to run once a test
// imports lambdatest.
const afterTests = "Once your tests import"

// readmeInline returns the commands in inline code of the README's
// paragraph that contains marker: none when no paragraph does.
func readmeInline(readme, marker string) []docCommand {
	_, paras := markdown(readme)
	var cmds []docCommand
	for _, p := range paras {
		if strings.Contains(p.text, marker) {
			cmds = append(cmds, inlineCommands("README.md", p)...)
		}
	}
	return cmds
}

// userRun runs a command of the docs in the user's module dir.
func userRun(t *testing.T, dir string, c docCommand) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), c.args[0], c.args[1:]...)
	cmd.Dir = dir
	// A workspace of the caller's must not be used.
	cmd.Env = append(append(hostEnv(), "GOWORK=off"), c.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s\n%v\n%s", c, err, out)
	}
	return string(out)
}

// checkZip checks p is a zip of one entry, bootstrap.
func checkZip(t *testing.T, p string) {
	t.Helper()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" {
		t.Errorf("%s: entries %v, want bootstrap alone", p, zr.File)
	}
}

// TestNewUserModule does what a new user does, as the docs say it: a new
// module outside the repository, with lmigo checked out beside it, that
// holds the README's function (moved from aws-lambda-go) and its test.
// It runs the README's commands that depend on the checkout, adds the
// test and runs what the README says to once tests import lambdatest,
// then every command of the docs that names ./cmd/myfn (the test, 20
// times, under goleak; the packing), and the optional modules'
// replacements with a codec. The function's go.mod then requires nothing but lmigo and
// allowedModules.
func TestNewUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	checkout := absRoot(t)
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	tmp := t.TempDir()
	if err := os.Symlink(checkout, filepath.Join(tmp, "lmigo")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(tmp, "app")
	mainGo := readmeGo(t, readme, "func main()")
	// The same function as aws-lambda-go runs it: the move is one line
	// (and its import).
	orig := strings.Replace(strings.Replace(mainGo, "concurrent.StartWithOptions(", "lambda.StartWithOptions(", 1),
		"\t\"github.com/lmigo/lmigo/concurrent\"\n", "", 1)
	if orig == mainGo || strings.Contains(orig, "lmigo") {
		t.Fatalf("the README's function no longer moves by its last line:\n%s", orig)
	}
	write := func(files map[string]string) {
		for name, text := range files {
			p := filepath.Join(app, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(map[string]string{
		"cmd/myfn/main.go": mainGo,
		"cmd/orig/main.go": orig,
		// A second function, which the README packs beside the first.
		"cmd/refund/main.go": mainGo,
	})
	goCmd := func(args ...string) docCommand {
		return docCommand{text: "go " + strings.Join(args, " "), args: append([]string{"go"}, args...)}
	}
	userRun(t, app, goCmd("mod", "init", "example.com/app"))
	for _, c := range readmeCommands(t, readme, "-replace=github.com/lmigo/lmigo=../lmigo") {
		userRun(t, app, c)
	}
	// The test comes once the module depends on lmigo, as a user adds
	// tests; then what the README says to run once tests import lambdatest.
	write(map[string]string{"cmd/myfn/main_test.go": readmeGo(t, readme, "func TestHandler(")})
	for _, c := range readmeInline(readme, afterTests) {
		userRun(t, app, c)
	}
	got := requires(t, app)
	if !slices.Contains(got, lmigoModule) {
		t.Errorf("the function's go.mod does not require lmigo: %v", got)
	}
	for _, m := range got {
		if _, ok := allowedModules[m]; !ok && m != lmigoModule {
			t.Errorf("a function using lmigo requires %s", m)
		}
	}
	mod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	if err != nil || !strings.Contains(string(mod), "tool github.com/lmigo/lmigo/cmd/lmigo-pack") {
		t.Errorf("go.mod lost the tool line (%v):\n%s", err, mod)
	}
	userRun(t, app, goCmd("vet", "./..."))

	// The docs' commands in the user's module, each once.
	ran := map[string]bool{}
	for _, c := range docCommands(t) {
		if !strings.Contains(c.text, userFn) || ran[c.text] {
			continue
		}
		ran[c.text] = true
		userRun(t, app, c)
	}
	if !ran["go test -count=20 "+userFn] {
		t.Errorf("the docs no longer run the README's test 20 times: %v", ran)
	}
	for _, arch := range []string{"arm64", "amd64"} {
		checkZip(t, filepath.Join(app, "dist", "myfn-"+arch+".zip"))
		checkZip(t, filepath.Join(app, "dist", "refund-"+arch+".zip"))
	}
	// Nothing the test started writes after it has passed.
	out := userRun(t, app, goCmd("test", "-v", "-count=1", userFn))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "--- PASS: TestHandler") })
	if last < 0 || len(lines) != last+3 || lines[last+1] != "PASS" || !strings.HasPrefix(lines[last+2], "ok") {
		t.Errorf("output after the test passed:\n%s", out)
	}

	// An optional module, through its replacement.
	fast := `package main

import (
	"context"

	"github.com/lmigo/lmigo/concurrent"
	_ "github.com/lmigo/lmigo/concurrent/codec/jsonv2"
)

func main() {
	concurrent.Start(func(ctx context.Context, in map[string]any) (map[string]any, error) { return in, nil },
		concurrent.WithCodec("jsonv2"))
}
`
	if err := os.MkdirAll(filepath.Join(app, "cmd", "fast"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "cmd", "fast", "main.go"), []byte(fast), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range readmeCommands(t, readme, "codec/jsonv2=../lmigo/concurrent/codec/jsonv2") {
		userRun(t, app, c)
	}
	userRun(t, app, goCmd("build", "./cmd/fast"))
	if got := requires(t, app); !slices.Contains(got, lmigoModule+"/concurrent/codec/jsonv2") {
		t.Errorf("the codec's module is not required: %v", got)
	}
}
