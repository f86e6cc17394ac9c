package rie

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestEmulatorEnv(t *testing.T) {
	t.Parallel()
	const path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"defaults", Options{}, []string{path, "AWS_LAMBDA_MAX_CONCURRENCY=1"}},
		{"negative N", Options{MaxConcurrency: -3}, []string{path, "AWS_LAMBDA_MAX_CONCURRENCY=1"}},
		{"N and timeout rounded up", Options{MaxConcurrency: 8, Timeout: 1500 * time.Millisecond},
			[]string{path, "AWS_LAMBDA_MAX_CONCURRENCY=8", "AWS_LAMBDA_FUNCTION_TIMEOUT=2"}},
		{"env overrides in place", Options{MaxConcurrency: 2, Env: []string{"A=1", "AWS_LAMBDA_MAX_CONCURRENCY=0", "A=2", "PATH=/x"}},
			[]string{"PATH=/x", "AWS_LAMBDA_MAX_CONCURRENCY=0", "A=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := emulatorEnv(tt.opts); !slices.Equal(got, tt.want) {
				t.Fatalf("emulatorEnv = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLogBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"under limit", 16, []string{"abc", "def"}, "abcdef"},
		{"at limit", 6, []string{"abc", "def"}, "abcdef"},
		{"over limit keeps the tail", 8, []string{"0123456", "789"}, "[rie: 4 earlier bytes dropped]\n456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tee bytes.Buffer
			l := &logBuffer{limit: tt.limit}
			s := stream{logs: l, tee: &tee}
			for _, w := range tt.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := string(l.Bytes()); got != tt.want {
				t.Fatalf("Bytes = %q, want %q", got, tt.want)
			}
			if tee.String() != strings.Join(tt.writes, "") {
				t.Fatalf("tee got %q", tee.String())
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	tail := " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 12345 0 0"
	tests := []struct {
		name    string
		in      string
		want    procStat
		wantErr bool
	}{
		{"plain", "42 (sh) S 7 42 42" + tail, procStat{ppid: 7, state: 'S', start: 12345}, false},
		{"name with ) and spaces", "42 (a) b (c) R 1 1 1" + tail, procStat{ppid: 1, state: 'R', start: 12345}, false},
		{"no paren", "42 sh S 7", procStat{}, true},
		{"short", "42 (sh) S 7 1 1", procStat{}, true},
		{"bad ppid", "42 (sh) S x 42 42" + tail, procStat{}, true},
		{"empty", "", procStat{}, true},
		{"NUL state", ")\x00" + strings.Repeat(" 0", 19), procStat{}, true},
		{"digit state", "1 (sh) 0 7" + tail, procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseStat = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (sh) S 7 42 42 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 12345 0 0"))
	f.Add([]byte("1 ((x)) Z 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b)
		if err == nil && !isLetter(st.state) {
			t.Fatalf("parsed %q with state %q, not a letter", b, st.state)
		}
	})
}

func TestExecWrapper(t *testing.T) {
	t.Setenv(ExecEnv, " /bin/sh  -x ")
	tests := []struct {
		name    string
		cmd     []string
		want    string
		wantErr bool
	}{
		{"none", []string{}, "", false},
		{"from the environment", nil, "#!/bin/sh\nexec '/bin/sh' '-x' /var/task/bootstrap \"$@\"\n", false},
		{"absolute", []string{"/bin/sh"}, "#!/bin/sh\nexec '/bin/sh' /var/task/bootstrap \"$@\"\n", false},
		{"not found", []string{"lmigo-no-such-program"}, "", true},
		{"quote in a word", []string{"/bin/sh", "-c'"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := execWrapper(tt.cmd)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("execWrapper(%q) = %q, %v; want %q, error %v", tt.cmd, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestTestContextFollowsTheDeadline: BuildT and StartT wait as long as the
// test may (go test -timeout), less a twentieth kept for the report, not a
// fixed time that a slow machine or a cold build cache can overrun.
func TestTestContextFollowsTheDeadline(t *testing.T) {
	t.Parallel()
	ctx, cancel := testContext(t)
	defer cancel()
	got, ok := ctx.Deadline()
	td, has := t.Deadline()
	if !has {
		if ok {
			t.Fatalf("deadline %v without a test deadline", got)
		}
		return
	}
	if left := time.Until(td); !ok || got.After(td) || td.Sub(got) > left/20+time.Second {
		t.Fatalf("deadline %v, the test's %v", got, td)
	}
}
