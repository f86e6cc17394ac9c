package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/internal/fntest"
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
