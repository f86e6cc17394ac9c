package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunKeepsFunctionOutput: run writes the function's stdout and
// stderr to a file beside its report and sums up its WARN and ERROR
// lines in the report: the function's own (JSON, logfmt, text) and
// lmigo's.
func TestRunKeepsFunctionOutput(t *testing.T) {
	dir, bin, events := openFixture(t)
	script, _ := wrapper(t, dir, strings.Join([]string{
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
	dir, bin, events := openFixture(t)
	script, _ := wrapper(t, dir, "echo '{\"level\":\"WARN\",\"message\":\"cache cold\"}'\nexec \""+bin+"\"")
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

// TestLineLevel: the levels loggers write, and lines that are not theirs.
func TestLineLevel(t *testing.T) {
	tests := []struct{ line, want string }{
		{`{"timestamp":"2026-12-06T10:00:00Z","level":"WARN","message":"x","requestId":"r"}`, "WARN"},
		{`{"level":"error","msg":"zap"}`, "ERROR"},
		{`{"msg":"nested","fields":{"level":"ERROR"}}`, ""},
		{`{"level":"INFO","message":"WARN in the text"}`, ""},
		{`time=2026-12-06T10:00:00Z level=WARN msg="slog text"`, "WARN"},
		{`level="error" msg=x`, "ERROR"},
		{`2026/12/06 10:00:00 ERROR: refused`, "ERROR"},
		{`[WARN] disk almost full`, "WARN"},
		{`2026/12/06 10:00:00 FATAL cannot start`, "ERROR"},
		{`2026/12/06 10:00:00 no error here, only the word error`, ""},
		{`plain line`, ""},
		{`{"level":`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := lineLevel([]byte(tt.line)); got != tt.want {
			t.Errorf("lineLevel(%s) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// FuzzOutput: whatever a function writes, in whatever pieces, the output
// takes it, counts no more lines than it ended, and keeps it whole.
func FuzzOutput(f *testing.F) {
	f.Add([]byte("{\"level\":\"WARN\"}\nlevel=error x\n[WARN] y"), 3)
	f.Add([]byte("gc 1 @0.1s 0%: x\n\x00\xff\n"), 1)
	f.Fuzz(func(t *testing.T, b []byte, piece int) {
		piece = max(1, piece%64+1)
		o, err := createOutput(t.TempDir(), "f.log")
		if err != nil {
			t.Fatal(err)
		}
		for rest := b; len(rest) > 0; {
			n := min(piece, len(rest))
			if w, err := o.Write(rest[:n]); w != n || err != nil {
				t.Fatalf("Write = %d, %v", w, err)
			}
			rest = rest[n:]
		}
		if err := o.close(); err != nil {
			t.Fatal(err)
		}
		c := o.summary()
		if lines := int64(bytes.Count(b, []byte("\n"))) + 1; c.Warn+c.Error > lines || c.Warn < 0 || c.Error < 0 {
			t.Fatalf("%d WARN and %d ERROR lines of %d", c.Warn, c.Error, lines)
		}
		if kept, err := os.ReadFile(c.File); err != nil || !bytes.Equal(kept, b) {
			t.Fatalf("the file holds %q (%v), want %q", kept, err, b)
		}
	})
}

// TestFunctionPart: in the emulator's output, its own lines are left out
// of the function's, also where one begins within a line of it.
func TestFunctionPart(t *testing.T) {
	tests := []struct{ in, want string }{
		{`time=2026-12-06T14:31:31.121Z level=WARN msg="InvokeRouter: no ready runtimes" RequestId=x`, ""},
		{`%: 0.82+3.2+0.003 ms clock, time=2026-12-06T14:31:31.121Z level=WARN msg="no ready runtimes"`, "%: 0.82+3.2+0.003 ms clock,"},
		{"START RequestId: 9ddaa3a1 Version: $LATEST", ""},
		{"REPORT RequestId: 9ddaa3a1\tDuration: 0.76 ms", ""},
		{`{"level":"WARN","message":"the function's own"}`, `{"level":"WARN","message":"the function's own"}`},
		{`2026/12/06 13:57:29 get item bulk#legacy: invalid key`, `2026/12/06 13:57:29 get item bulk#legacy: invalid key`},
	}
	for _, tt := range tests {
		if got := functionPart(tt.in); got != tt.want {
			t.Errorf("functionPart(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	o := &fnOutput{rie: true}
	_, _ = o.Write([]byte("28 @time=2026-12-06T14:31:45.463Z level=WARN msg=\"InvokeRouter: no ready runtimes\"\n{\"level\":\"ERROR\",\"message\":\"own\"}\n"))
	if c := o.summary(); c.Warn != 0 || c.Error != 1 {
		t.Errorf("counted %+v: the emulator's WARN is not the function's", c)
	}
}
