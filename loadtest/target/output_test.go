package target

import (
	"bytes"
	"os"
	"testing"
)

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
		o, err := CreateOutput(t.TempDir(), "f.log")
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
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
		c := o.Summary()
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
	o := &Output{rie: true}
	_, _ = o.Write([]byte("28 @time=2026-12-06T14:31:45.463Z level=WARN msg=\"InvokeRouter: no ready runtimes\"\n{\"level\":\"ERROR\",\"message\":\"own\"}\n"))
	if c := o.Summary(); c.Warn != 0 || c.Error != 1 {
		t.Errorf("counted %+v: the emulator's WARN is not the function's", c)
	}
}
