package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/internal/fntest"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestRunKeepsFunctionOutput: run writes the function's stdout and
// stderr to a file beside its report and sums up its WARN and ERROR
// lines in the report: the function's own (JSON, logfmt, text) and
// lmigo's.
func TestRunKeepsFunctionOutput(t *testing.T) {
	dir, bin, events := fntest.OpenShape(t)
	script, _ := fntest.Wrapper(t, dir, strings.Join([]string{
		`echo '{"level":"WARN","message":"cache cold"}'`,
		`echo '{"level":"ERROR","message":"downstream refused"}' >&2`,
		`echo 'time=2026-12-06T10:00:00Z level=warn msg="slow downstream"'`,
		`echo 'plain line'`,
		`exec "` + bin + `"`,
	}, "\n"))
	out := filepath.Join(t.TempDir(), "out")
	var report bytes.Buffer
	// LMIGO_SLOT is not a variable of lmigo's: its runtime warns of it.
	err := runCommand(t.Context(), []string{"-bootstrap", script, "-events", events, "-target", "fake", "-n", "2",
		"-count", "20", "-warmup", "4", "-env", "LMIGO_SLOT=3", "-out", out}, &report, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("%v\n%s", err, report.String())
	}
	log := filepath.Join(out, "run-function.log")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the function's output is not kept: %v\n%s", err, report.String())
	}
	for _, w := range []string{"cache cold", "downstream refused", "slow downstream", "plain line", "LMIGO_SLOT"} {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("%s lacks %q:\n%s", log, w, b)
		}
	}
	for _, w := range []string{"3 WARN and 1 ERROR line(s)", `first WARN: {"level":"WARN","message":"cache cold"}`,
		`first ERROR: {"level":"ERROR","message":"downstream refused"}`, log} {
		if !strings.Contains(report.String(), w) {
			t.Errorf("the report lacks %q:\n%s", w, report.String())
		}
	}
}

// TestRelativePathNotFound: a relative path that does not resolve says
// which directory it was read from.
func TestRelativePathNotFound(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("events.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-bootstrap", "dist/fn.zip", "-events", "events.json"},
		{"-bootstrap", "events.json", "-events", "testdata/event.json"},
	} {
		err := runCommand(t.Context(), append(args, "-target", "fake", "-out", ""), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "relative path") || !strings.Contains(err.Error(), dir) {
			t.Errorf("%v: err %v, want it to say it read the relative path from %s", args, err, dir)
		}
	}
}

// TestSizeKeepsFunctionOutput: size keeps the function's output of every
// step in one file beside size.md, and sums up its WARN lines.
func TestSizeKeepsFunctionOutput(t *testing.T) {
	dir, bin, events := fntest.OpenShape(t)
	script, _ := fntest.Wrapper(t, dir, "echo '{\"level\":\"WARN\",\"message\":\"cache cold\"}'\nexec \""+bin+"\"")
	out := filepath.Join(t.TempDir(), "out")
	var report bytes.Buffer
	err := sizeCommand(t.Context(), []string{"-bootstrap", script, "-events", events, "-target", "fake", "-max-n", "2",
		"-step", "300ms", "-check=false", "-out", out}, &report, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("%v\n%s", err, report.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "size-function.log"))
	if err != nil || bytes.Count(b, []byte("cache cold")) != 2 || !bytes.Contains(b, []byte("=== loadtest: N=2, a fresh process")) {
		t.Errorf("size-function.log (%v) lacks a step's output:\n%s", err, b)
	}
	if !strings.Contains(report.String(), "The function's output, over every step: 2 WARN and 0 ERROR line(s)") {
		t.Errorf("the report does not sum up the output:\n%s", report.String())
	}
}

// TestRIEFunctionAlone: in the emulator, the GC count is the
// function's alone (the emulator, a Go program, gets GODEBUG=gctrace=1
// too), and the function's file holds its lines whole, the emulator's
// own lines (its logger's, START, END, REPORT, its GCs) in a file of
// their own. GOGC=1 makes both collect.
func TestRIEFunctionAlone(t *testing.T) {
	if rie.Supported() != nil || os.Geteuid() != 0 {
		t.Skip("the emulator needs root")
	}
	if _, err := rie.Binary(); err != nil {
		t.Skipf("the emulator is not installed (make rie): %v", err)
	}
	dir, bin, _ := fntest.OpenShape(t)
	script, _ := fntest.Wrapper(t, dir, strings.Join([]string{
		`echo "fn godebug=$GODEBUG"`,
		`echo '{"level":"WARN","message":"cache cold"}'`,
		`exec "` + bin + `"`,
	}, "\n"))
	out := t.TempDir()
	fo, err := target.CreateOutput(out, "run-function.log")
	if err != nil {
		t.Fatal(err)
	}
	in, err := target.Start(t.Context(), target.Options{Target: target.RIE, MemoryMB: 512, Timeout: 10 * time.Second, Output: fo, Env: []string{"GOGC=1"}},
		target.Runtime{Name: target.Function, Binary: script, SurvivesPanic: true}, 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := in.Inv.Invoke(t.Context(), []byte(`{"a":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(in.Stop(), fo.Close()); err != nil {
		t.Fatal(err)
	}
	fn, err := os.ReadFile(filepath.Join(out, "run-function.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"fn godebug=gctrace=1\n", `{"level":"WARN","message":"cache cold"}` + "\n"} {
		if !bytes.Contains(fn, []byte(w)) {
			t.Errorf("the function's file lacks %q:\n%s", w, fn)
		}
	}
	for _, not := range []string{"START RequestId: ", "REPORT RequestId: ", "LocalProcessSupervisor.Exec"} {
		if bytes.Contains(fn, []byte(not)) {
			t.Errorf("the function's file holds the emulator's %q:\n%s", not, fn)
		}
	}
	emu, err := os.ReadFile(filepath.Join(out, "run-emulator.log"))
	if err != nil || !bytes.Contains(emu, []byte("START RequestId: ")) || gcLines(emu) == 0 {
		t.Errorf("the emulator's lines and GCs are not in run-emulator.log (%v):\n%s", err, emu)
	}
	if got, want := in.GC.Count(), gcLines(fn); got != want || want == 0 {
		t.Errorf("%d GCs counted, the function's file holds %d", got, want)
	}
	if c := fo.Summary(); c.Warn != 1 || c.Error != 0 {
		t.Errorf("counts %+v, want the function's 1 WARN and the emulator's lines apart", c)
	}
}

// gcLines counts the gctrace lines of b.
func gcLines(b []byte) int64 {
	var n int64
	for l := range bytes.Lines(b) {
		if measure.IsGCLine(bytes.TrimRight(l, "\n")) {
			n++
		}
	}
	return n
}

// TestSizeWrongAnswersSaid: size of a function whose answers are HTTP
// errors (no -expect) fails saying so, and names the file that holds
// the function's output instead of dumping raw lines, the emulator's
// among them.
func TestSizeWrongAnswersSaid(t *testing.T) {
	bin, data := fixture(t, "storeapi")
	for _, where := range []string{target.Fake, target.RIE} {
		t.Run(where, func(t *testing.T) {
			if where == target.RIE && (rie.Supported() != nil || os.Geteuid() != 0) {
				t.Skip("the emulator needs root")
			}
			out := filepath.Join(t.TempDir(), "out")
			err := sizeCommand(t.Context(), []string{"-bootstrap", bin, "-events", filepath.Join(data, "events"), "-target", where,
				"-max-n", "2", "-step", "300ms", "-check=false", "-out", out}, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), "went wrong") {
				t.Fatalf("err %v, want the wrong answers said", err)
			}
			if msg := err.Error(); !strings.Contains(msg, filepath.Join(out, "size-function.log")) || strings.Contains(msg, "RequestId: ") || strings.Contains(msg, "\n") {
				t.Errorf("the error does not name the function's file in one line, or holds raw output:\n%s", msg)
			}
		})
	}
}
