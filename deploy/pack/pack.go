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
	"time"
)

// DefaultPackage is the main package zipped when none is named.
const DefaultPackage = "github.com/lmigo/lmigo/cmd/bootstrap"

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

var errArch = errors.New("unsupported GOARCH (want arm64 or amd64)")

// ZipName is the file name of the zip for goarch.
func ZipName(goarch string) string { return "bootstrap-" + goarch + ".zip" }

// Package builds pkg for linux/goarch and writes dir/bootstrap-GOARCH.zip,
// replacing it atomically. It returns the zip's path.
func Package(ctx context.Context, pkg, goarch, dir string) (string, error) {
	if _, ok := archLevel[goarch]; !ok {
		return "", fmt.Errorf("%q: %w", goarch, errArch)
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
	out := filepath.Join(dir, ZipName(goarch))
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
