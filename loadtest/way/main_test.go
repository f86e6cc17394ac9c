package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPatch(t *testing.T) {
	tests := []struct {
		name, src, want string
		err             bool
	}{
		{name: "raised", src: "const (\n\tlazyFresh = time.Second\n)\n", want: "const (\n\tlazyFresh = time.Hour\n)\n"},
		{name: "renamed or gone", src: "const fresh = time.Second\n", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "pipeline.go")
			if err := os.WriteFile(p, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			err := patch(p)
			if tt.err {
				if err == nil {
					t.Fatal("patch: no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p); string(b) != tt.want {
				t.Errorf("patched:\n%s\nwant:\n%s", b, tt.want)
			}
		})
	}
}

func TestConnMethods(t *testing.T) {
	tree := t.TempDir()
	src := map[string]string{
		"conn.go":   "func (c *Conn) A() {}\nfunc (c *Conn) B() {}\nfunc helper() {}\n",
		"socket.go": "func (c *Conn) dial() {}\n",
		"other.go":  "func (s *Server) A() {}\n",
	}
	if err := os.MkdirAll(filepath.Join(tree, "rapi"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range src {
		if err := os.WriteFile(filepath.Join(tree, "rapi", name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := connMethods(&b, tree); err != nil {
		t.Fatal(err)
	}
	want := "== rapi.Conn methods per file\nrapi/conn.go:2\nrapi/socket.go:1\n"
	if b.String() != want {
		t.Errorf("connMethods:\n%s\nwant:\n%s", b.String(), want)
	}
}
