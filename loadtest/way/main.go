// Command way measures one warm invocation's way through lmigo's packages
// (issue 32): how often the running function's file changes, how often it
// returns to a file already left, and calls from a lower package (rapi,
// pool, internal) up into concurrent.
//
//	go -C loadtest run ./way [-tree DIR] [-v] [-work DIR]
//
// It copies DIR's files known to git (default: this repository), raises
// lazyFresh in the copy (see patch), builds traced/main.go there with
// inlining and optimisation off, runs it
// under dlv trace for a typed and a raw handler, and counts the slot
// goroutine's 5th round (from its 5th call of tidy to the next). Each form
// gets three figures: every call and return; the same with repeated calls
// folded; and the first-call order (each function once, in the order of
// its first call), which -v lists: "->" a switch, "<<" a return.
//
// It needs dlv: go install github.com/go-delve/delve/cmd/dlv@v1.27.2
package main

import (
	"bytes"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed traced/main.go
var tracedMain []byte

// traced matches the functions dlv traces: lmigo's runtime packages, and
// the mark of each invocation.
const traced = `^(github\.com/lmigo/lmigo/(concurrent|rapi|pool|internal/[a-z]+)\.|main\.roundMark)`

// warm is the round counted (0-based): the slot has served four before.
const warm = 4

func main() {
	tree := flag.String("tree", "", "the tree to measure (default: this repository's root)")
	verbose := flag.Bool("v", false, "list the first-call way: -> a switch, << a return")
	work := flag.String("work", "", "keep the copy, binary and traces in this directory (default: a temporary one, removed)")
	flag.Parse()
	if err := run(os.Stdout, *tree, *work, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "way:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, tree, work string, verbose bool) error {
	dlv, err := findDlv()
	if err != nil {
		return err
	}
	if tree == "" {
		if tree, err = repoRoot(); err != nil {
			return err
		}
	}
	if tree, err = filepath.Abs(tree); err != nil {
		return err
	}
	kept := "kept with -work DIR"
	if work == "" {
		if work, err = os.MkdirTemp("", "way-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	} else {
		// Absolute: the build and dlv run in other directories.
		if work, err = filepath.Abs(work); err != nil {
			return err
		}
		if err := os.MkdirAll(work, 0o755); err != nil {
			return err
		}
		kept = "in " + work
	}
	cp := filepath.Join(work, "tree")
	if err := copyTree(tree, cp); err != nil {
		return err
	}
	if err := patch(filepath.Join(cp, "rapi", "pipeline.go")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(cp, "waytraced"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cp, "waytraced", "main.go"), tracedMain, 0o644); err != nil {
		return err
	}
	bin := filepath.Join(work, "traced")
	// Without inlining every function of the way is a call dlv can see.
	if err := command(cp, nil, "go", "build", "-gcflags=all=-N -l", "-o", bin, "./waytraced"); err != nil {
		return err
	}
	funcFiles, err := fileMap(bin, cp)
	if err != nil {
		return err
	}
	for _, form := range []string{"typed", "raw"} {
		out := filepath.Join(work, form+".trace")
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		err = command(work, f, dlv, "trace", "--exec", bin, traced, "--", form)
		f.Close()
		if err == nil {
			err = report(w, form, out, funcFiles, verbose)
		}
		if err != nil {
			return fmt.Errorf("%s: %w (the trace: %s)", form, err, kept)
		}
	}
	return connMethods(w, tree)
}

// findDlv looks for dlv on PATH, then where go install puts it.
func findDlv() (string, error) {
	if p, err := exec.LookPath("dlv"); err == nil {
		return p, nil
	}
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(gopath)), string(os.PathListSeparator))
		p := filepath.Join(first, "bin", "dlv")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("dlv not found: go install github.com/go-delve/delve/cmd/dlv@v1.27.2")
}

// repoRoot is the directory of lmigo's go.mod at or above the working
// directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/lmigo/lmigo\n") {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("not inside lmigo's repository: give -tree")
		}
		dir = up
	}
}

// copyTree copies the files git knows in tree, as they are on disk.
func copyTree(tree, dst string) error {
	ls, err := exec.Command("git", "-C", tree, "ls-files", "-z").Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return fmt.Errorf("git ls-files in %s: %w: %s", tree, err, bytes.TrimSpace(ee.Stderr))
	}
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %w", tree, err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	for name := range strings.SplitSeq(strings.TrimSuffix(string(ls), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(tree, name))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted and not yet committed
		}
		if err != nil {
			return err
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// patch keeps lazy answers fresh for an hour. A traced slot is slow: past
// lazyFresh every answer would be read at once, which a slot at speed
// leaves to its next poll, and the way would not be the one at speed.
func patch(pipeline string) error {
	b, err := os.ReadFile(pipeline)
	if err != nil {
		return err
	}
	const from, to = "lazyFresh = time.Second", "lazyFresh = time.Hour"
	if !strings.Contains(string(b), from) {
		return fmt.Errorf("%s: no %q to raise", pipeline, from)
	}
	return os.WriteFile(pipeline, []byte(strings.Replace(string(b), from, to, 1)), 0o644)
}

// command runs name in dir; with out, its stdout and stderr go there.
func command(dir string, out io.Writer, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdout, cmd.Stderr = out, out
	if out == nil {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// fileMap maps each function of lmigo and main in bin to its file, from
// the symbol table and the line table.
func fileMap(bin, tree string) (map[string]string, error) {
	nm, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool nm: %w", err)
	}
	names, addrs := symbols(string(nm))
	cmd := exec.Command("go", "tool", "addr2line", bin)
	cmd.Stdin = strings.NewReader("0x" + strings.Join(addrs, "\n0x") + "\n")
	a2l, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go tool addr2line: %w", err)
	}
	return files(names, string(a2l), tree)
}

// report prints one form's three figures.
func report(w io.Writer, form, trace string, files map[string]string, verbose bool) error {
	f, err := os.Open(trace)
	if err != nil {
		return err
	}
	events, err := parseTrace(f)
	f.Close()
	if err != nil {
		return err
	}
	way, err := round(events, warm)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "==", form)
	every := func(t tally) {
		for _, u := range t.upward {
			fmt.Fprintln(w, "upward:", u)
		}
		fmt.Fprintf(w, "calls %d, file switches %d, returns to a file already left %d (into rapi %d), upward calls %d\n",
			t.calls, t.switches, t.returns, t.intoRapi, len(t.upward))
		fmt.Fprintln(w, "files:", len(t.files), strings.Join(t.files, " "))
	}
	every(tallyAll(way, files))
	fmt.Fprintln(w, "   reading (calls of one function in a row folded):")
	every(tallyAll(fold(way), files))
	t := tallyFirst(way, files)
	if verbose {
		for _, l := range t.lines {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintf(w, "first-call order: functions %d, file switches %d, returns to a file already left %d (into rapi %d)\n",
		t.calls, t.switches, t.returns, t.intoRapi)
	return nil
}

// connMethods prints how many methods of rapi.Conn each file of rapi holds.
func connMethods(w io.Writer, tree string) error {
	fmt.Fprintln(w, "== rapi.Conn methods per file")
	names, err := filepath.Glob(filepath.Join(tree, "rapi", "*.go"))
	if err != nil {
		return err
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		n := 0
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, "func (c *Conn)") {
				n++
			}
		}
		if n > 0 {
			fmt.Fprintf(w, "rapi/%s:%d\n", filepath.Base(name), n)
		}
	}
	return nil
}
