package target

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUserBootstrap(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fn")
	if err := os.WriteFile(bin, []byte("\x7fELF binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, cleanup, err := UserBootstrap(bin)
	if err != nil || got != bin {
		t.Fatalf("binary: %q, %v", got, err)
	}
	cleanup()
	zipPath := filepath.Join(dir, "fn.zip")
	if err := Zip(zipPath, bin); err != nil {
		t.Fatal(err)
	}
	got, cleanup, err = UserBootstrap(zipPath)
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
	if _, _, err := UserBootstrap(other); err == nil || !strings.Contains(err.Error(), "without a bootstrap") {
		t.Errorf("zip without bootstrap: %v", err)
	}
}
