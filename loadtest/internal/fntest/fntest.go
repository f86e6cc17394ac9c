// Package fntest gives the load test's tests a function of known shape:
// built, wrapped in a shell script, and what it left running found.
package fntest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/target"
)

// pkgShapeIO is the I/O-bound shape: 2 ms of CPU, 38 ms waiting.
const pkgShapeIO = "github.com/lmigo/lmigo/loadtest/shapes/io"

// Shape builds the I/O-bound shape and writes an events file.
func Shape(t *testing.T) (bin, events string) {
	t.Helper()
	dir := t.TempDir()
	bin, events = filepath.Join(dir, "bootstrap"), filepath.Join(dir, "events.json")
	if err := target.Build(t.Context(), target.HostArch(), []string{pkgShapeIO}, []string{bin}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, []byte("[{\"a\":1},{\"b\":2}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, events
}

// OpenDir is a new directory that the emulator's runtime user (uid 993)
// can read, removed when the test ends.
func OpenDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lmigo-loadtest-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// OpenShape is sizeFixture's function in a directory of openDir.
func OpenShape(t *testing.T) (dir, bin, events string) {
	t.Helper()
	dir = OpenDir(t)
	fn, events := Shape(t)
	bin = filepath.Join(dir, "fn")
	if b, err := os.ReadFile(fn); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copy the function: %v", err)
	}
	return dir, bin, events
}

// Wrapper writes a shell script of body, in which SLEEP is a command
// sleeping with a mark of its own on its command line. It returns the
// script and the mark.
func Wrapper(t *testing.T, dir, body string) (script, mark string) {
	t.Helper()
	mark = fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
	script = filepath.Join(dir, "wrapper-"+mark)
	text := "#!/bin/sh\n" + strings.ReplaceAll(body, "SLEEP", "sleep "+mark) + "\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, mark
}

// Leftovers lists the live processes running bin or whose command line
// holds mark.
func Leftovers(bin, mark string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		base := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(base, "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || len(stat) < i+3 || stat[i+2] == 'Z' {
			continue
		}
		cl, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		exe, _ := os.Readlink(filepath.Join(base, "exe"))
		if exe == bin || bytes.Contains(cl, []byte(mark)) {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(cl), "\x00", " "))
		}
	}
	return out
}

// KillAll kills the processes leftovers listed, so that a failed test
// leaves nothing behind either.
func KillAll(left []string) {
	for _, l := range left {
		pid, _, _ := strings.Cut(l, " ")
		if n, err := strconv.Atoi(pid); err == nil {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
}

// Running lists the processes whose executable is bin.
func Running(bin string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == bin {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
