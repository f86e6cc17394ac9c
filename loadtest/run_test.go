package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/internal/fntest"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// TestRunUserBootstrap: a user's function, a binary or a zip, is driven
// with the empty event or the user's events, and an answer is right when
// it is not an error (or matches -expect), not when it is the demo's.
func TestRunUserBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	bin, events := fntest.Shape(t)
	zipped := filepath.Join(t.TempDir(), "fn.zip")
	if err := target.Zip(zipped, bin); err != nil {
		t.Fatal(err)
	}
	common := []string{"-target", "fake", "-n", "4", "-count", "60", "-warmup", "8", "-out", ""}
	tests := []struct {
		name string
		args []string
		err  string
		want []string
	}{
		{"tiny, as a user tries first", []string{"-bootstrap", bin, "-workload", "tiny"}, "",
			[]string{"the empty event {}", "ok, 0 function errors as asked, 0 wrong", "verdict: function at N=4"}},
		{"a zip with events", []string{"-bootstrap", zipped, "-events", events, "-shuffle"}, "",
			[]string{"2 event(s) of events.json, shuffled", "0 wrong"}},
		{"expect matches", []string{"-bootstrap", bin, "-events", events, "-expect", `"done":true`}, "", []string{"0 wrong"}},
		{"expect does not", []string{"-bootstrap", bin, "-events", events, "-expect", `"ok":true`}, "had problems",
			[]string{"wrong answers", "verdict: NOT shown"}},
		{"a demo workload", []string{"-bootstrap", bin, "-workload", "mix"}, "needs the demo's handler", nil},
		{"in the emulator by default", []string{"-bootstrap", bin, "-events", events, "-n", "2", "-count", "20", "-warmup", "4", "-out", ""}, "",
			[]string{"target rie", "0 wrong", "verdict: function at N=2"}},
		{"the fake where the emulator cannot run", []string{"-bootstrap", bin, "-events", events, "-n", "2", "-count", "20", "-warmup", "4", "-out", ""}, "",
			[]string{"target fake", "0 wrong"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(tt.args, common...)
			if strings.HasSuffix(tt.name, "by default") {
				if _, err := rie.Binary(); err != nil || os.Geteuid() != 0 {
					t.Skipf("the emulator needs root and aws-lambda-rie (%v)", err)
				}
				args = tt.args
			}
			if strings.HasSuffix(tt.name, "cannot run") {
				t.Setenv("PATH", t.TempDir()) // no unshare
				args = tt.args
			}
			var out bytes.Buffer
			err := runCommand(t.Context(), args, &out, &bytes.Buffer{})
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err %v, want %q\n%s", err, tt.err, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
			if tt.err == "" {
				lines := strings.Split(strings.TrimSpace(out.String()), "\n")
				if last := lines[len(lines)-1]; !strings.HasPrefix(last, "verdict: ") {
					t.Errorf("last line %q, want the verdict", last)
				}
			}
		})
	}
}

// TestRunHTTPErrors: answers shaped like an HTTP door's response with a
// statusCode of 400 or more are wrong unless -expect accepts them; the
// verdict says how many, and the command fails. The run still gives its
// figures, and no PROBLEM dumps the runtime's raw output (the emulator's
// START and END lines among it).
func TestRunHTTPErrors(t *testing.T) {
	bin, data := fixture(t, "storeapi")
	events := filepath.Join(data, "events") // a 404 and a 400 among 5
	for _, where := range []string{target.Fake, target.RIE} {
		t.Run(where, func(t *testing.T) {
			if where == target.RIE && (rie.Supported() != nil || os.Geteuid() != 0) {
				t.Skip("the emulator needs root")
			}
			common := []string{"-bootstrap", bin, "-events", events, "-target", where, "-n", "2", "-count", "20", "-warmup", "5", "-out", ""}
			var out bytes.Buffer
			err := runCommand(t.Context(), common, &out, &bytes.Buffer{})
			if err == nil {
				t.Errorf("HTTP errors counted right: no error\n%s", out.String())
			}
			httpErrorsSaid(t, out.String(), where == target.Fake)
			for _, not := range []string{"answered rate                              - ", "last output of the runtime", "RequestId: "} {
				if strings.Contains(out.String(), not) {
					t.Errorf("the report holds %q:\n%s", not, out.String())
				}
			}
			out.Reset()
			err = runCommand(t.Context(), append(common, "-expect", `"statusCode":(200|400|404)\b`), &out, &bytes.Buffer{})
			if err != nil || !strings.Contains(out.String(), "0 wrong") {
				t.Errorf("-expect accepting them: err %v\n%s", err, out.String())
			}
		})
	}
}

// httpErrorsSaid checks that the verdict says how many answers were
// HTTP errors, and that the counts add up; even: each event was answered
// in turn (a throttled one is sent again), as the fake target does.
func httpErrorsSaid(t *testing.T, out string, even bool) {
	t.Helper()
	verdict := regexp.MustCompile(`verdict: NOT shown: (\d+) of (\d+) answers were HTTP errors \(status 400: (\d+), 404: (\d+)\)`)
	m := verdict.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "unless -expect accepts them") {
		t.Fatalf("the verdict does not say how many answers were HTTP errors:\n%s", out)
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	// Two of the five events, cycled: 400 and 404 as often, 2/5 of all.
	if even && (n(m[3]) != n(m[4]) || n(m[1])*5 > n(m[2])*2+5) || n(m[1]) != n(m[3])+n(m[4]) || n(m[1]) == 0 {
		t.Errorf("counts %q do not add up", m[0])
	}
}

// TestRunFunctionExits: a function that calls log.Fatal on a request
// path ends the run at once; the first PROBLEM says that it exited, with
// its exit status and its last words; no invocation waits for its
// timeout and no throttle is read as a burst.
func TestRunFunctionExits(t *testing.T) {
	bin, data := fixture(t, "storeapi")
	events := t.TempDir()
	for _, f := range []string{"events/01-get-item.json", "events/02-put-item.json", "event-fatal.json"} {
		b, err := os.ReadFile(filepath.Join(data, f))
		if err != nil || os.WriteFile(filepath.Join(events, filepath.Base(f)), b, 0o644) != nil {
			t.Fatalf("copy %s: %v", f, err)
		}
	}
	for _, where := range []string{target.Fake, target.RIE} {
		t.Run(where, func(t *testing.T) {
			if where == target.RIE && (rie.Supported() != nil || os.Geteuid() != 0) {
				t.Skip("the emulator needs root")
			}
			var out bytes.Buffer
			t0 := time.Now()
			err := runCommand(t.Context(), []string{"-bootstrap", bin, "-events", events, "-target", where, "-n", "4",
				"-count", "200", "-out", ""}, &out, &bytes.Buffer{})
			t.Logf("ended in %s", time.Since(t0).Round(time.Millisecond))
			if err == nil {
				t.Fatalf("no error\n%s", out.String())
			}
			_, first, _ := strings.Cut(out.String(), "\nPROBLEM ")
			first, _, _ = strings.Cut(first, "\nPROBLEM ")
			for _, w := range []string{"the function exited", "exit status 1", `get item bulk#legacy: memstore: invalid key`} {
				if !strings.Contains(first, w) {
					t.Errorf("the first PROBLEM lacks %q:\nPROBLEM %s\n\nthe whole report:\n%s", w, first, out.String())
				}
			}
			if !strings.Contains(out.String(), "verdict: NOT shown: the function exited (exit status 1) during the load") {
				t.Errorf("the verdict does not say that the function exited:\n%s", out.String())
			}
			for _, not := range []string{"timed out", "a burst", "read memory"} {
				if strings.Contains(out.String(), not) {
					t.Errorf("the report says %q:\n%s", not, out.String())
				}
			}
		})
	}
}

// TestRunBootstrapOneMeaning: -bootstrap is the user's function, whatever
// else is given; a prebuilt bootstrap of one of the load test's runtimes
// is given by that runtime's flag, as compare takes it.
func TestRunBootstrapOneMeaning(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-bootstrap")
	var out bytes.Buffer
	err := runCommand(t.Context(), []string{"-runtime", "aws-lambda-go", "-bootstrap", missing, "-target", "fake", "-out", ""}, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "-bootstrap is your function") || !strings.Contains(err.Error(), "-ref PATH") {
		t.Errorf("-runtime aws-lambda-go -bootstrap: err %v, want it refused, naming -ref\n%s", err, out.String())
	}
	out.Reset()
	err = runCommand(t.Context(), []string{"-runtime", "aws-lambda-go", "-ref", missing, "-target", "fake", "-n", "1", "-count", "4", "-warmup", "2", "-out", ""}, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "PROBLEM") || !strings.Contains(out.String(), missing) {
		t.Errorf("-runtime aws-lambda-go -ref PATH: err %v, want a run of PATH (which does not exist)\n%s", err, out.String())
	}
}

// TestRunHelpSaysTarget: run -h gives the target run uses: the emulator
// for -bootstrap where it can run, fake otherwise; never a bare
// (default "fake") that -bootstrap does not follow.
func TestRunHelpSaysTarget(t *testing.T) {
	var out bytes.Buffer
	if _, err := parseRun([]string{"-h"}, &out); err == nil {
		t.Fatal("-h: no error")
	}
	help := out.String()
	i := strings.Index(help, "  -target ")
	if i < 0 {
		t.Fatalf("no -target in the help:\n%s", help)
	}
	line, _, _ := strings.Cut(help[i:], "\n  -t")
	if strings.Contains(line, `(default "fake")`) || !strings.Contains(line, "with -bootstrap, rie where the AWS emulator can run here") {
		t.Errorf("the help's -target does not say the default run uses:\n%s", line)
	}
}
