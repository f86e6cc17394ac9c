package errordoc

import (
	"runtime"
	"testing"
)

// TestStackFrame: a frame's path and label are cut as aws-lambda-go cuts
// them.
func TestStackFrame(t *testing.T) {
	tests := []struct {
		file, function string
		wantPath       string
		wantLabel      string
	}{
		{"/home/u/go/src/github.com/org/repo/pkg/file.go", "github.com/org/repo/pkg.Func", "github.com/org/repo/pkg/file.go", "Func"},
		{"/home/u/go/src/pkg/sub/file.go", "pkg/sub.Type.Method", "pkg/sub/file.go", "Type.Method"},
		{"/src/main.go", "main.main", "src/main.go", "main"},
		{"/build/cmd/app/main.go", "main.(*server).handle.func1", "app/main.go", "(*server).handle.func1"},
		{"/w/m/concurrent/x.go", "github.com/lmigo/lmigo/concurrent.F[...]", "/w/m/concurrent/x.go", "F[...]"},
		{"github.com/lmigo/lmigo/concurrent/x.go", "github.com/lmigo/lmigo/concurrent.F", "github.com/lmigo/lmigo/concurrent/x.go", "F"},
		{"runtime/panic.go", "runtime.gopanic", "runtime/panic.go", "gopanic"},
		{"x.go", "f", "x.go", "f"},
		{"", "", "", ""},
	}
	for _, tt := range tests {
		f := stackFrame(runtime.Frame{File: tt.file, Function: tt.function, Line: 7})
		if f.Path != tt.wantPath || f.Label != tt.wantLabel || f.Line != 7 {
			t.Errorf("stackFrame(%q, %q) = %+v, want %q %q", tt.file, tt.function, *f, tt.wantPath, tt.wantLabel)
		}
	}
}
