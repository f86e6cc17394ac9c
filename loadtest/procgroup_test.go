package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/internal/fntest"
	"github.com/lmigo/lmigo/loadtest/sizing"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestWrapperLeavesNothing: a bootstrap that is a wrapper script, whose
// child sleeps, leaves nothing running when run or size ends, whether the
// function served (run, size) or the load test gave up on it, in the fake
// Runtime API and in the emulator.
func TestWrapperLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	dir, bin, events := fntest.OpenShape(t)
	serve := "SLEEP &\n\"" + bin + "\" &\nwait"
	const giveUp = "SLEEP &\nexit 3"
	// The emulator reports an init that failed once the runtime's output
	// ends: a child holding it would hold the report up to its limit.
	const giveUpQuiet = "SLEEP >/dev/null 2>&1 &\nexit 3"
	tests := []struct {
		name, cmd, body, target, err string
	}{
		{"run serves", "run", serve, target.Fake, ""},
		{"run gives up", "run", giveUp, target.Fake, "exited during init"},
		{"size serves", "size", serve, target.Fake, ""},
		{"size gives up", "size", giveUp, target.Fake, "exited during init"},
		{"run serves in the emulator", "run", serve, target.RIE, ""},
		{"run gives up in the emulator", "run", giveUpQuiet, target.RIE, "exit status 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.target == target.RIE {
				if _, err := rie.Binary(); err != nil || os.Geteuid() != 0 {
					t.Skipf("the emulator needs root and aws-lambda-rie (%v)", err)
				}
			}
			script, mark := fntest.Wrapper(t, dir, tt.body)
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
			if left := fntest.Leftovers(bin, mark); len(left) > 0 {
				t.Errorf("%s returned with processes it started still running:\n%s", tt.cmd, strings.Join(left, "\n"))
				fntest.KillAll(left)
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
	dir, bin, events := fntest.OpenShape(t)
	for _, where := range []string{target.Fake, target.RIE} {
		t.Run(where, func(t *testing.T) {
			if where == target.RIE {
				if _, err := rie.Binary(); err != nil || os.Geteuid() != 0 {
					t.Skipf("the emulator needs root and aws-lambda-rie (%v)", err)
				}
			}
			script, mark := fntest.Wrapper(t, dir, "SLEEP &\n\""+bin+"\" &\nwait")
			jsonOut := filepath.Join(t.TempDir(), "size.json")
			var out, errOut bytes.Buffer
			err := sizeCommand(t.Context(), []string{"-bootstrap", script, "-events", events, "-target", where, "-out", "",
				"-max-n", "2", "-step", "300ms", "-check=false", "-json", jsonOut}, &out, &errOut)
			t.Logf("%s\n%s", out.String(), errOut.String())
			if left := fntest.Leftovers(bin, mark); len(left) > 0 {
				t.Errorf("processes left running:\n%s", strings.Join(left, "\n"))
				fntest.KillAll(left)
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(jsonOut)
			if err != nil {
				t.Fatal(err)
			}
			var p struct {
				CPUMS float64       `json:"cpuMsPerInvocation"`
				Steps []sizing.Step `json:"steps"`
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
