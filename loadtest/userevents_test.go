package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/internal/fntest"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestRunBadInputs: each bad events file and each bad bootstrap ends run
// and size with an error that says what is wrong, and leaves nothing
// running.
func TestRunBadInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	bin, events := fntest.Shape(t)
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	emptyDir := filepath.Join(dir, "no-events")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	badEvents := []struct{ name, path, want string }{
		{"empty", write("empty.json", "", 0o644), "no event"},
		{"blank", write("blank.json", " \n\t\n", 0o644), "no event"},
		{"not JSON", write("text.json", "hello\n", 0o644), "line 1"},
		{"cut short", write("cut.json", `{"a":`, 0o644), "events"},
		{"empty array", write("arr.json", "[]", 0o644), "no event"},
		{"two values a line", write("two.json", "{} {}\n", 0o644), "line 1"},
		{"binary", write("bin.json", "\x00\x01\x02\xff", 0o644), "events"},
		{"over 6 MiB", write("big.json", `"`+strings.Repeat("x", 6<<20)+`"`, 0o644), "more than Lambda's"},
		{"missing", filepath.Join(dir, "missing.json"), "no such file"},
		{"an empty directory", emptyDir, "no-events: no .json or .jsonl file"},
	}
	badBoots := []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "missing-bootstrap"), "no such file"},
		// The emulator makes its copy executable: the script then ends its init.
		{"not executable", write("noexec", "#!/bin/sh\nexit 0\n", 0o644), "permission denied|Runtime.ExitError"},
		{"not a program", write("text", "hello\n", 0o755), "exec format error"},
		{"exits at once", write("exits", "#!/bin/sh\necho bad config >&2\nexit 2\n", 0o755), "exit status 2"},
	}
	type tc struct{ name, boot, events, want string }
	var cases []tc
	for _, e := range badEvents {
		cases = append(cases, tc{"events " + e.name, bin, e.path, e.want})
	}
	for _, b := range badBoots {
		cases = append(cases, tc{"bootstrap " + b.name, b.path, events, b.want})
	}
	commands := map[string]func(context.Context, []string, io.Writer, io.Writer) error{"run": runCommand, "size": sizeCommand}
	for _, cmd := range []string{"run", "size"} {
		for _, where := range []string{target.Fake, target.RIE} {
			for _, c := range cases {
				t.Run(cmd+"/"+where+"/"+c.name, func(t *testing.T) {
					if where == target.RIE && (rie.Supported() != nil || os.Geteuid() != 0) {
						t.Skip("the emulator needs root")
					}
					args := []string{"-bootstrap", c.boot, "-events", c.events, "-target", where, "-out", ""}
					if cmd == "run" {
						args = append(args, "-n", "2", "-count", "10", "-warmup", "2")
					} else {
						args = append(args, "-step", "300ms", "-max-n", "2")
					}
					var out, errOut bytes.Buffer
					t0 := time.Now()
					err := commands[cmd](t.Context(), args, &out, &errOut)
					t.Logf("ended in %s: %v", time.Since(t0).Round(time.Millisecond), err)
					if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()+out.String()) {
						t.Errorf("err %v, want an error saying %q\n%s\n%s", err, c.want, out.String(), errOut.String())
					}
					if left := fntest.Running(c.boot); len(left) > 0 {
						t.Errorf("processes of %s left running: %v", c.boot, left)
					}
				})
			}
		}
	}
}

// TestRunShippedEvents: events as repositories ship them, one JSON object
// over several lines (sam local invoke -e) and a directory of such files,
// are run as they are.
func TestRunShippedEvents(t *testing.T) {
	store, storeData := fixture(t, "storeapi")
	batch, batchData := fixture(t, "streambatch")
	tests := []struct {
		name, bin, events string
		want              []string
	}{
		{"one object over lines", store, filepath.Join(storeData, "event.json"), []string{"1 event(s) of event.json", "0 wrong"}},
		{"a directory of them", batch, filepath.Join(batchData, "events"), []string{"10 event(s) of 10 files in events", "0 wrong"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runCommand(t.Context(), []string{"-bootstrap", tt.bin, "-events", tt.events, "-target", "fake",
				"-n", "2", "-count", "20", "-warmup", "4", "-out", ""}, &out, &errOut)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestEventWorkloadEnv: -workload event:NAME tells the events bootstraps
// which event to answer, in run and in compare.
func TestEventWorkloadEnv(t *testing.T) {
	run, err := parseRun([]string{"-workload", "event:s3", "-target", "fake"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := parseCompare([]string{"-workload", "event:s3", "-target", "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Event != "s3" || cmp.Event != "s3" {
		t.Errorf("-workload event:s3: the bootstraps are told %q (run), %q (compare)", run.Event, cmp.Event)
	}
}
