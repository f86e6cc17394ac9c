package load

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestParseEvents(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // event names and payloads, "where=payload"
		err      string
	}{
		{"lines", "{\"a\": 1}\n\n{\"b\":2}\n", []string{`line 1={"a":1}`, `line 3={"b":2}`}, ""},
		{"crlf lines", "{\"a\":1}\r\n\"s\"\r\n", []string{`line 1={"a":1}`, `line 2="s"`}, ""},
		{"array", "[{\"a\": 1}, 2, \"x\", null]", []string{`element 1={"a":1}`, `element 2=2`, `element 3="x"`, `element 4=null`}, ""},
		{"array over lines", "[\n {\"a\":1},\n {\"b\":2}\n]\n", []string{`element 1={"a":1}`, `element 2={"b":2}`}, ""},
		{"arrays a line", "[1,2]\n[3]\n", []string{`line 1=[1,2]`, `line 2=[3]`}, ""},
		{"one event", "{}", []string{`={}`}, ""},
		{"one object over lines", "{\n  \"version\": \"2.0\",\n  \"body\": \"x\"\n}\n", []string{`={"version":"2.0","body":"x"}`}, ""},
		{"objects over lines", "{\n \"a\": 1\n}\n{\n \"b\": 2\n}\n", []string{`line 1={"a":1}`, `line 4={"b":2}`}, ""},
		{"byte order mark", "\xef\xbb\xbf{\"a\":1}\n", []string{`={"a":1}`}, ""},
		{"empty", " \n\t", nil, "no event"},
		{"empty array", "[]", nil, "no event"},
		{"cut short", "{\"a\":1}\n{\"a\":\n", nil, "line 2, column 1: a JSON value cut short"},
		{"two values a line", "{} {}\n", nil, "line 1, column 4: a second JSON value"},
		{"a value then garbage", "{\n\"a\":1\n} x\n", nil, "line 3, column 3"},
		{"bad array", "[1,", nil, "line 1, column 1: a JSON value cut short"},
		{"garbage", "hello\n", nil, "line 1, column 1: not JSON"},
		{"garbage on line 3", "{}\n{}\n{\"a\" 1}\n", nil, "line 3, column 6: not JSON"},
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
				s = append(s, e.where+"="+string(e.payload))
			}
			if strings.Join(s, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

func TestParseEventsBounds(t *testing.T) {
	big := `"` + strings.Repeat("x", maxEvent) + `"`
	if _, err := parseEvents([]byte("1\n" + big + "\n")); err == nil || !strings.Contains(err.Error(), "line 2: an event of") {
		t.Errorf("an event over 6 MiB: err %v", err)
	}
	if _, err := parseEvents([]byte("[" + big + "]")); err == nil || !strings.Contains(err.Error(), "element 1: an event of") {
		t.Errorf("an array event over 6 MiB: err %v", err)
	}
	many := strings.Repeat("1\n", maxEvents+1)
	if _, err := parseEvents([]byte(many)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("%d events: err %v", maxEvents+1, err)
	}
}

// TestReadEventsDir: a directory's .json and .jsonl files, in the order
// of their names, each event named by its file; other files are left out.
func TestReadEventsDir(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"02-b.json":  "{\n  \"b\": 1\n}\n",
		"01-a.json":  "[{\"a\":1},{\"a\":2}]",
		"03-c.jsonl": "{\"c\":1}\n{\"c\":2}\n",
		"README.md":  "not events",
		"04-d.JSON":  "{\"d\":1}",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "05-sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	evs, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.name()+"="+string(e.payload))
	}
	want := []string{`01-a.json element 1={"a":1}`, `01-a.json element 2={"a":2}`, `02-b.json={"b":1}`,
		`03-c.jsonl line 1={"c":1}`, `03-c.jsonl line 2={"c":2}`, `04-d.JSON={"d":1}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "06-bad.json"), []byte("{\"x\":\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEvents(dir); err == nil || !strings.Contains(err.Error(), "06-bad.json: events: line 1") {
		t.Errorf("a bad file in the directory: err %v, want it named", err)
	}
	if _, err := ReadEvents(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .json or .jsonl file") {
		t.Errorf("an empty directory: err %v", err)
	}
}

// FuzzParseEvents: whatever the bytes, parseEvents returns or refuses;
// every event it returns is one compact JSON value within the bounds, and
// the events written one a line read back the same.
func FuzzParseEvents(f *testing.F) {
	for _, s := range []string{"{}\n{\"a\":1}", "[1,2,3]", "[1,2]\n[3]", "", "\n\n", "[", "{\"a\":\"\\u00e9\"}\r\n", "[[]]", "null",
		"{\n \"a\": [\n1]\n}\n", "\xef\xbb\xbf{}", "{} {}", "1 \n 2", "\"a\nb\""} {
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
		var lines [][]byte
		for _, e := range evs {
			if !json.Valid(e.payload) || len(e.payload) > maxEvent {
				t.Fatalf("event %q is not one JSON value within bounds", e.payload)
			}
			var c bytes.Buffer
			_ = json.Compact(&c, e.payload)
			if !bytes.Equal(c.Bytes(), e.payload) {
				t.Fatalf("event %q not compact", e.payload)
			}
			lines = append(lines, e.payload)
		}
		if len(evs) == 1 {
			return // one array event would read back as its elements
		}
		again, err := parseEvents(bytes.Join(lines, []byte("\n")))
		if err != nil || len(again) != len(evs) {
			t.Fatalf("the events one a line read back as %d events, %v; want %d", len(again), err, len(evs))
		}
		for i := range evs {
			if !bytes.Equal(again[i].payload, evs[i].payload) {
				t.Fatalf("event %d read back as %q, want %q", i, again[i].payload, evs[i].payload)
			}
		}
	})
}

func TestEventItems(t *testing.T) {
	var evs []Event
	for i := range 5 {
		evs = append(evs, Event{payload: []byte(strconv.Itoa(i + 1)), file: "events.json", where: "line " + strconv.Itoa(i+1)})
	}
	in := eventItems(evs, false, 1, nil)
	for i, it := range in {
		if string(it.Payload) != string(evs[i].payload) || it.Name != evs[i].name() {
			t.Fatalf("in order: item %d is %s", i, it.Payload)
		}
	}
	a, b := eventItems(evs, true, 7, nil), eventItems(evs, true, 7, nil)
	for i := range a {
		if string(a[i].Payload) != string(b[i].Payload) {
			t.Fatal("the same seed shuffled two ways")
		}
	}
	expect := regexp.MustCompile(`"ok":true`)
	checks := []struct {
		o    Outcome
		re   *regexp.Regexp
		want bool
	}{
		{Outcome{Body: []byte(`{}`)}, nil, true},
		{Outcome{Body: []byte(`{}`), FunctionError: "Runtime.Unknown"}, nil, false},
		{Outcome{Body: []byte(`{"ok":true}`)}, expect, true},
		{Outcome{Body: []byte(`{"ok":false}`)}, expect, false},
	}
	for _, c := range checks {
		if got := eventItems(evs, false, 0, c.re)[0].Check(c.o); got != c.want {
			t.Errorf("check(%+v, %v) = %v", c.o, c.re, got)
		}
	}
}
