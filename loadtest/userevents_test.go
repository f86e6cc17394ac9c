package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

func TestParseEvents(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"lines", "{\"a\": 1}\n\n{\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}, ""},
		{"crlf lines", "{\"a\":1}\r\n\"s\"\r\n", []string{`{"a":1}`, `"s"`}, ""},
		{"array", "[{\"a\": 1}, 2, \"x\", null]", []string{`{"a":1}`, `2`, `"x"`, `null`}, ""},
		{"array over lines", "[\n {\"a\":1},\n {\"b\":2}\n]\n", []string{`{"a":1}`, `{"b":2}`}, ""},
		{"arrays a line", "[1,2]\n[3]\n", []string{`[1,2]`, `[3]`}, ""},
		{"one event", "{}", []string{`{}`}, ""},
		{"empty", " \n\t", nil, "no event"},
		{"empty array", "[]", nil, "no event"},
		{"bad line", "{\"a\":1}\n{\"a\":\n", nil, "line 2 is not one JSON value"},
		{"two values a line", "{} {}\n", nil, "line 1"},
		{"bad array", "[1,", nil, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEvents([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, e := range got {
				s = append(s, string(e))
			}
			if strings.Join(s, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

func TestParseEventsBounds(t *testing.T) {
	big := `"` + strings.Repeat("x", maxEvent) + `"`
	if _, err := parseEvents([]byte(big + "\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("an event over 6 MiB: err %v", err)
	}
	if _, err := parseEvents([]byte("[" + big + "]")); err == nil || !strings.Contains(err.Error(), "more than Lambda's") {
		t.Errorf("an array event over 6 MiB: err %v", err)
	}
	many := strings.Repeat("1\n", maxEvents+1)
	if _, err := parseEvents([]byte(many)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("%d events: err %v", maxEvents+1, err)
	}
}

// FuzzParseEvents: whatever the bytes, parseEvents returns or refuses;
// every event it returns is one compact JSON value within the bounds.
func FuzzParseEvents(f *testing.F) {
	for _, s := range []string{"{}\n{\"a\":1}", "[1,2,3]", "[1,2]\n[3]", "", "\n\n", "[", "{\"a\":\"\\u00e9\"}\r\n", "[[]]", "null"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := parseEvents(b)
		if err != nil {
			if evs != nil {
				t.Fatalf("events %q beside error %v", evs, err)
			}
			return
		}
		if len(evs) == 0 || len(evs) > maxEvents {
			t.Fatalf("%d events", len(evs))
		}
		for _, e := range evs {
			if !json.Valid(e) || len(e) > maxEvent {
				t.Fatalf("event %q is not one JSON value within bounds", e)
			}
			var c bytes.Buffer
			_ = json.Compact(&c, e)
			if !bytes.Equal(c.Bytes(), e) {
				t.Fatalf("event %q not compact", e)
			}
		}
	})
}

func TestEventItems(t *testing.T) {
	evs := [][]byte{[]byte(`1`), []byte(`2`), []byte(`3`), []byte(`4`), []byte(`5`)}
	in := eventItems(evs, false, 1, nil)
	for i, it := range in {
		if string(it.payload) != string(evs[i]) {
			t.Fatalf("in order: item %d is %s", i, it.payload)
		}
	}
	a, b := eventItems(evs, true, 7, nil), eventItems(evs, true, 7, nil)
	for i := range a {
		if string(a[i].payload) != string(b[i].payload) {
			t.Fatal("the same seed shuffled two ways")
		}
	}
	expect := regexp.MustCompile(`"ok":true`)
	checks := []struct {
		o    outcome
		re   *regexp.Regexp
		want bool
	}{
		{outcome{Body: []byte(`{}`)}, nil, true},
		{outcome{Body: []byte(`{}`), FunctionError: "Runtime.Unknown"}, nil, false},
		{outcome{Body: []byte(`{"ok":true}`)}, expect, true},
		{outcome{Body: []byte(`{"ok":false}`)}, expect, false},
	}
	for _, c := range checks {
		if got := eventItems(evs, false, 0, c.re)[0].check(c.o); got != c.want {
			t.Errorf("check(%+v, %v) = %v", c.o, c.re, got)
		}
	}
}

func TestUserBootstrap(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fn")
	if err := os.WriteFile(bin, []byte("\x7fELF binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, cleanup, err := userBootstrap(bin)
	if err != nil || got != bin {
		t.Fatalf("binary: %q, %v", got, err)
	}
	cleanup()
	zipPath := filepath.Join(dir, "fn.zip")
	if err := zipBootstrap(zipPath, bin); err != nil {
		t.Fatal(err)
	}
	got, cleanup, err = userBootstrap(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	b, err := os.ReadFile(got)
	fi, _ := os.Stat(got)
	if err != nil || string(b) != "\x7fELF binary" || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("unzipped %q (%v), mode %v", b, err, fi.Mode())
	}
	// A zip without a bootstrap is refused.
	other := filepath.Join(dir, "other.zip")
	f, _ := os.Create(other)
	zw := zip.NewWriter(f)
	w, _ := zw.Create("main")
	_, _ = w.Write([]byte("x"))
	_ = zw.Close()
	_ = f.Close()
	if _, _, err := userBootstrap(other); err == nil || !strings.Contains(err.Error(), "without a bootstrap") {
		t.Errorf("zip without bootstrap: %v", err)
	}
}

// TestRunBadInputs: each bad events file and each bad bootstrap ends run
// with an error that says what is wrong, and leaves nothing running.
func TestRunBadInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	bin, events := sizeFixture(t)
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
		{"over 6 MiB", write("big.json", `"`+strings.Repeat("x", maxEvent)+`"`, 0o644), "line 1"},
		{"missing", filepath.Join(dir, "missing.json"), "no such file"},
		{"an empty directory", emptyDir, "no-events"},
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
	for _, target := range []string{targetFake, targetRIE} {
		for _, c := range cases {
			t.Run(target+"/"+c.name, func(t *testing.T) {
				if target == targetRIE && (rie.Supported() != nil || os.Geteuid() != 0) {
					t.Skip("the emulator needs root")
				}
				var out, errOut bytes.Buffer
				t0 := time.Now()
				err := runCommand(t.Context(), []string{"-bootstrap", c.boot, "-events", c.events, "-target", target,
					"-n", "2", "-count", "10", "-warmup", "2", "-out", ""}, &out, &errOut)
				t.Logf("ended in %s: %v", time.Since(t0).Round(time.Millisecond), err)
				if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()+out.String()) {
					t.Errorf("err %v, want an error saying %q\n%s\n%s", err, c.want, out.String(), errOut.String())
				}
				if left := running(c.boot); len(left) > 0 {
					t.Errorf("processes of %s left running: %v", c.boot, left)
				}
			})
		}
	}
}
