package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	for _, m := range requires(t, "../..") {
		if _, ok := allowedModules[m]; !ok {
			t.Errorf("go.mod requires %s, which a bootstrap does not link: move what needs it into a module of its own, or justify it in allowedModules", m)
		}
	}
}

// TestNewUserModule does what a new user does: a fresh module that
// requires lmigo and calls concurrent.Start, go mod tidy, go build. Its
// go.mod then requires nothing but lmigo and allowedModules.
func TestNewUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/fn\n\ngo 1.26\n\nrequire " + lmigoModule + " v0.0.0\n\nreplace " +
			lmigoModule + " => " + checkout + "\n",
		"main.go": `package main

import (
	"context"

	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	concurrent.Start(func(ctx context.Context, e map[string]any) (string, error) { return "ok", nil })
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", "bootstrap", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// The module cache (make download) or the proxy serves the
		// modules; a workspace of the caller's must not be used.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	got := requires(t, dir)
	lmigo := false
	for _, m := range got {
		if m == lmigoModule {
			lmigo = true
			continue
		}
		if _, ok := allowedModules[m]; !ok {
			t.Errorf("a function using lmigo requires %s", m)
		}
	}
	if !lmigo {
		t.Errorf("the function's go.mod does not require lmigo: %v", got)
	}
}
