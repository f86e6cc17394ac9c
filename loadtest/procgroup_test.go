package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// openDir is a new directory that the emulator's runtime user (uid 993)
// can read, removed when the test ends.
func openDir(t *testing.T) string {
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

// openFixture is sizeFixture's function in a directory of openDir.
func openFixture(t *testing.T) (dir, bin, events string) {
	t.Helper()
	dir = openDir(t)
	fn, events := sizeFixture(t)
	bin = filepath.Join(dir, "fn")
	if b, err := os.ReadFile(fn); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copy the function: %v", err)
	}
	return dir, bin, events
}

// wrapper writes a shell script of body, in which SLEEP is a command
// sleeping with a mark of its own on its command line. It returns the
// script and the mark.
func wrapper(t *testing.T, dir, body string) (script, mark string) {
	t.Helper()
	mark = fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
	script = filepath.Join(dir, "wrapper-"+mark)
	text := "#!/bin/sh\n" + strings.ReplaceAll(body, "SLEEP", "sleep "+mark) + "\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, mark
}

// leftovers lists the live processes running bin or whose command line
// holds mark.
func leftovers(bin, mark string) []string {
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

// killAll kills the processes leftovers listed, so that a failed test
// leaves nothing behind either.
func killAll(left []string) {
	for _, l := range left {
		pid, _, _ := strings.Cut(l, " ")
		if n, err := strconv.Atoi(pid); err == nil {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
}

// TestWrapperLeavesNothing: a bootstrap that is a wrapper script, whose
// child sleeps, leaves nothing running when run or size ends, whether the
// function served (run, size) or the load test gave up on it, in the fake
// Runtime API and in the emulator.
func TestWrapperLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	dir, bin, events := openFixture(t)
	serve := "SLEEP &\n\"" + bin + "\" &\nwait"
	const giveUp = "SLEEP &\nexit 3"
	// The emulator reports an init that failed once the runtime's output
	// ends: a child holding it would hold the report up to its limit.
	const giveUpQuiet = "SLEEP >/dev/null 2>&1 &\nexit 3"
	tests := []struct {
		name, cmd, body, target, err string
	}{
		{"run serves", "run", serve, targetFake, ""},
		{"run gives up", "run", giveUp, targetFake, "exited during init"},
		{"size serves", "size", serve, targetFake, ""},
		{"size gives up", "size", giveUp, targetFake, "exited during init"},
		{"run serves in the emulator", "run", serve, targetRIE, ""},
		{"run gives up in the emulator", "run", giveUpQuiet, targetRIE, "exit status 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.target == targetRIE {
				if _, err := rie.Binary(); err != nil || os.Geteuid() != 0 {
					t.Skipf("the emulator needs root and aws-lambda-rie (%v)", err)
				}
			}
			script, mark := wrapper(t, dir, tt.body)
			args := []string{"-bootstrap", script, "-events", events, "-target", tt.target, "-out", ""}
			run := runCommand
			if tt.cmd == "run" {
				args = append(args, "-n", "2", "-count", "20", "-warmup", "4")
			} else {
				args = append(args, "-max-n", "2", "-step", "300ms", "-check=false")
				run = sizeCommand
			}
			var out, errOut bytes.Buffer
			err := run(t.Context(), args, &out, &errOut)
			// run says a give-up as a PROBLEM of its report.
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error()+out.String(), tt.err)) {
				t.Errorf("err %v, want %q\n%s\n%s", err, tt.err, out.String(), errOut.String())
			}
			t.Logf("%s\n%s", out.String(), errOut.String())
			if left := leftovers(bin, mark); len(left) > 0 {
				t.Errorf("%s returned with processes it started still running:\n%s", tt.cmd, strings.Join(left, "\n"))
				killAll(left)
			}
		})
	}
}

// TestSizeMeasuresWrapperGroup: behind a shell wrapper that does not
// exec, size measures the function's whole process group, not the
// shell: the CPU per invocation is the function's (the shape burns 2 ms
// of it), and -json writes finite figures.
func TestSizeMeasuresWrapperGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	dir, bin, events := openFixture(t)
	for _, target := range []string{targetFake, targetRIE} {
		t.Run(target, func(t *testing.T) {
			if target == targetRIE {
				if _, err := rie.Binary(); err != nil || os.Geteuid() != 0 {
					t.Skipf("the emulator needs root and aws-lambda-rie (%v)", err)
				}
			}
			script, mark := wrapper(t, dir, "SLEEP &\n\""+bin+"\" &\nwait")
			jsonOut := filepath.Join(t.TempDir(), "size.json")
			var out, errOut bytes.Buffer
			err := sizeCommand(t.Context(), []string{"-bootstrap", script, "-events", events, "-target", target, "-out", "",
				"-max-n", "2", "-step", "300ms", "-check=false", "-json", jsonOut}, &out, &errOut)
			t.Logf("%s\n%s", out.String(), errOut.String())
			if left := leftovers(bin, mark); len(left) > 0 {
				t.Errorf("processes left running:\n%s", strings.Join(left, "\n"))
				killAll(left)
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(jsonOut)
			if err != nil {
				t.Fatal(err)
			}
			var p struct {
				CPUMS float64    `json:"cpuMsPerInvocation"`
				Steps []sizeStep `json:"steps"`
			}
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			if p.CPUMS <= 0 {
				t.Errorf("CPU per invocation %v ms: the shell's, not the function's", p.CPUMS)
			}
			for _, s := range p.Steps {
				if s.CPUMS <= 0 {
					t.Errorf("N=%d: CPU per invocation %v ms: the shell's, not the function's", s.N, s.CPUMS)
				}
			}
		})
	}
}

// TestGroupMeasured: a user's function behind a wrapper is measured as
// its group: the wrapper and its child, their memory summed, their CPU
// together.
func TestGroupMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	dir := openDir(t)
	fn, _ := sizeFixture(t)
	script, mark := wrapper(t, dir, "SLEEP &\n\""+fn+"\" &\nwait")
	cfg := defaultConfig()
	in, err := startFake(t.Context(), cfg, runtimeSpec{Name: rtFunction, Binary: script}, 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := in.stop(); err != nil {
			t.Error(err)
		}
		if left := leftovers(fn, mark); len(left) > 0 {
			t.Errorf("processes left running:\n%s", strings.Join(left, "\n"))
			killAll(left)
		}
	}()
	pids := in.procs()
	if !slices.Contains(pids, in.pid) || len(pids) != 3 {
		t.Fatalf("measured %v, want the wrapper %d, its sleep and the function", pids, in.pid)
	}
	var child int
	for _, pid := range pids {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == fn {
			child = pid
		}
	}
	own, err := measure.ReadCPU(child)
	if err != nil {
		t.Fatal(err)
	}
	group, err := in.cpu()
	if err != nil || group < own.Total() {
		t.Errorf("group CPU %v (%v), less than the function's own %v", group, err, own.Total())
	}
	var sum int64
	for _, pid := range pids {
		st, err := measure.ReadStatus(pid)
		if err != nil {
			t.Fatal(err)
		}
		sum += st.RSS
	}
	st, err := in.status()
	// RSS moves between the reads; the function's own is the most of it.
	fnSt, _ := measure.ReadStatus(child)
	if err != nil || st.RSS < fnSt.RSS || st.Peak < fnSt.Peak {
		t.Errorf("group memory %+v (%v), less than the function's own %+v (the members' sum was %d)", st, err, fnSt, sum)
	}
}
