package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	errArch     = errors.New("unsupported GOARCH (want arm64 or amd64)")
	errNotMain  = errors.New("not a main package")
	errNoMain   = errors.New("no main package")
	errName     = errors.New("not a file name")
	errSameName = errors.New("two packages, one zip name")
)

// ZipName is the file name of name's zip for goarch.
func ZipName(name, goarch string) string { return name + "-" + goarch + ".zip" }

// Target is a main package to pack, and the name of its zips.
type Target struct {
	ImportPath string
	Name       string // before -GOARCH.zip
}

// Targets lists the main packages the patterns name, as go build reads
// them, each named after the last element of its import path, a major
// version suffix skipped (example.com/fn/v2 is fn). A package named
// outright must be main; a wildcard (./cmd/...) skips libraries, as go
// build -o does. Two packages that would share a name are refused.
func Targets(ctx context.Context, patterns ...string) ([]Target, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	args := append([]string{"list", "-tags", "lambda.norpc", "-json=Name,ImportPath,Match", "--"}, patterns...)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w\n%s", strings.Join(patterns, " "), err, stderr.Bytes())
	}
	var targets []Target
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Name, ImportPath string
			Match            []string
		}
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list %s: %w", strings.Join(patterns, " "), err)
		}
		if p.Name == "main" {
			targets = append(targets, Target{ImportPath: p.ImportPath, Name: zipBase(p.ImportPath)})
			continue
		}
		named := slices.ContainsFunc(p.Match, func(m string) bool { return !strings.Contains(m, "...") })
		if named || len(p.Match) == 0 {
			return nil, fmt.Errorf("%s is package %s: %w", p.ImportPath, p.Name, errNotMain)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%s: %w", strings.Join(patterns, " "), errNoMain)
	}
	if err := sameNames(targets); err != nil {
		return nil, err
	}
	return targets, nil
}

// zipBase is the name of the zips of the package at path.
func zipBase(path string) string {
	elems := strings.Split(path, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && majorSuffix(last) {
		last = elems[len(elems)-2]
	}
	return last
}

// sameNames refuses two packages whose zips would have one name: the
// second would overwrite the first.
func sameNames(targets []Target) error {
	seen := map[string]string{}
	for _, t := range targets {
		if other, ok := seen[t.Name]; ok {
			return fmt.Errorf("%s and %s would both write %s: pack each in a call of its own, with -name: %w",
				other, t.ImportPath, ZipName(t.Name, "ARCH"), errSameName)
		}
		seen[t.Name] = t.ImportPath
	}
	return nil
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
