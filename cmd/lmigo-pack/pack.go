package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// EntryName is the one file in each zip: what provided.al2023 runs.
const EntryName = "bootstrap"

// entryTime is the fixed modification time of the entry: the zip epoch.
var entryTime = time.Date(1980, time.January, 1, 0, 0, 0, 0, time.UTC)

// buildFlags are the go build flags of a shipped bootstrap.
var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// Supported architectures: GOARCH, with the pinned level variable.
var archLevel = map[string]string{
	"arm64": "GOARM64=v8.0",
	"amd64": "GOAMD64=v1",
}

var (
	errArch    = errors.New("unsupported GOARCH (want arm64 or amd64)")
	errNotMain = errors.New("not a main package")
	errName    = errors.New("not a file name")
)

// ZipName is the file name of name's zip for goarch.
func ZipName(name, goarch string) string { return name + "-" + goarch + ".zip" }

// PackageName names the zips of the main package pkg: the last element of
// its import path, skipping a major version suffix (example.com/fn/v2 is
// fn), so that each function's zips have names of their own.
func PackageName(ctx context.Context, pkg string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, goBin, "list", "-tags", "lambda.norpc", "-f", "{{.Name}} {{.ImportPath}}", pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	name, path, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if strings.Contains(path, "\n") {
		return "", fmt.Errorf("%s names more than one package: give one", pkg)
	}
	if name != "main" {
		return "", fmt.Errorf("%s is package %s: %w", path, name, errNotMain)
	}
	elems := strings.Split(path, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && majorSuffix(last) {
		last = elems[len(elems)-2]
	}
	return last, nil
}

// majorSuffix reports whether s is a module path's major version suffix,
// v2 and up.
func majorSuffix(s string) bool {
	if len(s) < 2 || s[0] != 'v' || s[1] == '0' || s == "v1" {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Package builds pkg for linux/goarch and writes dir/NAME-GOARCH.zip,
// replacing it atomically. It returns the zip's path.
func Package(ctx context.Context, pkg, name, goarch, dir string) (string, error) {
	if _, ok := archLevel[goarch]; !ok {
		return "", fmt.Errorf("%q: %w", goarch, errArch)
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("zip name %q: %w", name, errName)
	}
	tmp, err := os.MkdirTemp("", "lmigo-pack-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, EntryName)
	if err := Build(ctx, pkg, goarch, bin); err != nil {
		return "", err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	var zb bytes.Buffer
	if err := WriteZip(&zb, data); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, ZipName(name, goarch))
	part := out + ".part"
	if err := os.WriteFile(part, zb.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(part, out); err != nil {
		_ = os.Remove(part)
		return "", err
	}
	return out, nil
}

// Build compiles the main package pkg for linux/goarch into out with the
// flags of a shipped bootstrap.
func Build(ctx context.Context, pkg, goarch, out string) error {
	level, ok := archLevel[goarch]
	if !ok {
		return fmt.Errorf("%q: %w", goarch, errArch)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("build %s: %w", pkg, err)
	}
	args := append([]string{"build"}, buildFlags...)
	args = append(args, "-o", out, pkg)
	cmd := exec.CommandContext(ctx, goBin, args...)
	// Later pairs win: what decides the bytes is pinned.
	cmd.Env = append(os.Environ(),
		"CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch, level, "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s for %s: %w\n%s", pkg, goarch, err, stderr.Bytes())
	}
	return nil
}

// WriteZip writes a zip holding binary as EntryName, mode 0755, at the
// fixed time: the same binary always gives the same bytes.
func WriteZip(w io.Writer, binary []byte) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	h := &zip.FileHeader{Name: EntryName, Method: zip.Deflate, Modified: entryTime}
	h.SetMode(0o755) // also marks the entry as made on Unix, so the mode is read
	f, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	if _, err := f.Write(binary); err != nil {
		return err
	}
	return zw.Close()
}
