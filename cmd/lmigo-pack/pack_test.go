package main

import (
	"archive/zip"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// refPackage is the reference bootstrap, the main package the tests pack.
const refPackage = "github.com/lmigo/lmigo/cmd/bootstrap"

// TestPackage builds both zips the way `make package` does, twice, and
// checks what Lambda relies on: the names (the package's), one executable entry called
// bootstrap, a static ELF for the right machine, the build flags, and the
// same bytes both times.
func TestPackage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		goarch  string
		machine elf.Machine
	}{
		{"arm64", elf.EM_AARCH64},
		{"amd64", elf.EM_X86_64},
	}
	first, second := t.TempDir(), t.TempDir()
	for _, tt := range tests {
		t.Run(tt.goarch, func(t *testing.T) {
			t.Parallel()
			a := pack(t, tt.goarch, first)
			b := pack(t, tt.goarch, second)
			if filepath.Base(a) != "bootstrap-"+tt.goarch+".zip" || filepath.Dir(a) != first {
				t.Errorf("zip named %s", filepath.Base(a))
			}
			za, zb := readFile(t, a), readFile(t, b)
			if !bytes.Equal(za, zb) {
				t.Fatalf("two builds differ: %d and %d bytes", len(za), len(zb))
			}
			bin := checkZip(t, za)
			checkELF(t, bin, tt.machine)
			checkBuildInfo(t, bin, tt.goarch)
		})
	}
}

func pack(t *testing.T, goarch, dir string) string {
	t.Helper()
	targets, err := Targets(t.Context(), refPackage)
	if err != nil || len(targets) != 1 {
		t.Fatalf("Targets(%s) = %v, %v", refPackage, targets, err)
	}
	p, err := Package(t.Context(), refPackage, targets[0].Name, goarch, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkZip checks the zip holds exactly the executable bootstrap and
// returns its bytes.
func checkZip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 {
		t.Fatalf("%d entries, want 1", len(zr.File))
	}
	f := zr.File[0]
	if f.Name != "bootstrap" {
		t.Errorf("entry %q, want bootstrap", f.Name)
	}
	// Unix permissions live in the high half of the external attributes,
	// and count only when the creator is Unix (3).
	if creator := f.CreatorVersion >> 8; creator != 3 {
		t.Errorf("creator %d, want 3 (Unix)", creator)
	}
	if mode := f.ExternalAttrs >> 16; mode != 0o100755 {
		t.Errorf("unix mode %o, want 100755 (regular file, rwxr-xr-x)", mode)
	}
	if !f.Mode().IsRegular() || f.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want -rwxr-xr-x", f.Mode())
	}
	if !f.Modified.Equal(entryTime) {
		t.Errorf("modified %v, want %v", f.Modified, entryTime)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	bin, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// checkELF checks bin is a stripped, statically linked executable for
// machine: provided.al2023 runs it with nothing else in the zip.
func checkELF(t *testing.T, bin []byte, machine elf.Machine) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("not an ELF file: %v", err)
	}
	defer f.Close()
	if f.Machine != machine || f.Class != elf.ELFCLASS64 {
		t.Errorf("machine %v class %v, want %v ELFCLASS64", f.Machine, f.Class, machine)
	}
	if f.Type != elf.ET_EXEC {
		t.Errorf("type %v, want ET_EXEC (static, not position-independent)", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("program header %v: dynamically linked", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("imports %v", libs)
	}
	for _, s := range f.Sections {
		if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			t.Errorf("section %s: not stripped (-ldflags='-s -w')", s.Name)
		}
	}
}

// checkBuildInfo checks the flags recorded in the binary.
func checkBuildInfo(t *testing.T, bin []byte, goarch string) {
	t.Helper()
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	if bi.Path != refPackage {
		t.Errorf("main package %s, want %s", bi.Path, refPackage)
	}
	got := map[string]string{}
	for _, s := range bi.Settings {
		got[s.Key] = s.Value
		if strings.HasPrefix(s.Key, "vcs") {
			t.Errorf("VCS stamp %s=%s: the bytes would depend on the checkout", s.Key, s.Value)
		}
	}
	want := map[string]string{
		"GOOS":        "linux",
		"GOARCH":      goarch,
		"CGO_ENABLED": "0",
		"-tags":       "lambda.norpc",
		"-trimpath":   "true",
		// -ldflags is not recorded with -trimpath; checkELF sees -s -w.
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("build setting %s = %q, want %q", k, got[k], v)
		}
	}
}

// TestWriteZipDeterministic: the zip's bytes depend on the binary alone,
// not on when it is written.
func TestWriteZipDeterministic(t *testing.T) {
	t.Parallel()
	bin := bytes.Repeat([]byte("\x7fELF lmigo "), 1000)
	var a, b bytes.Buffer
	if err := WriteZip(&a, bin); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // a different DOS timestamp, were the clock used
	if err := WriteZip(&b, bin); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same binary, different zip bytes")
	}
	if got := checkZip(t, a.Bytes()); !bytes.Equal(got, bin) {
		t.Fatal("entry does not round-trip")
	}
}

func TestPackageRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, goarch string
		want         error
	}{
		{"fn", "riscv64", errArch},
		{"", "arm64", errName},
		{"..", "arm64", errName},
		{"a/b", "arm64", errName},
	}
	for _, tt := range tests {
		if _, err := Package(t.Context(), refPackage, tt.name, tt.goarch, t.TempDir()); !errors.Is(err, tt.want) {
			t.Errorf("Package(%q, %q): %v, want %v", tt.name, tt.goarch, err, tt.want)
		}
	}
}

// TestTargets: the zips are named after each main package, a major
// version suffix skipped; a library named outright is refused, one a
// wildcard matches is skipped; two packages of one name are refused.
func TestTargets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		patterns []string
		want     []string // import path=zip name
		err      error
	}{
		{[]string{refPackage}, []string{refPackage + "=bootstrap"}, nil},
		{[]string{"../bootstrap"}, []string{refPackage + "=bootstrap"}, nil},
		{[]string{"."}, []string{"github.com/lmigo/lmigo/cmd/lmigo-pack=lmigo-pack"}, nil},
		{[]string{"../...", "../bootstrap"}, []string{refPackage + "=bootstrap", "github.com/lmigo/lmigo/cmd/lmigo-pack=lmigo-pack"}, nil},
		{[]string{"github.com/lmigo/lmigo/concurrent"}, nil, errNotMain},
		{[]string{"../...", "../bootstrap/demo"}, nil, errNotMain},
		{[]string{"../bootstrap/demo/..."}, nil, errNoMain},
	}
	for _, tt := range tests {
		targets, err := Targets(t.Context(), tt.patterns...)
		var got []string
		for _, tg := range targets {
			got = append(got, tg.ImportPath+"="+tg.Name)
		}
		if !slices.Equal(got, tt.want) || !errors.Is(err, tt.err) {
			t.Errorf("Targets(%q) = %q, %v; want %q, %v", tt.patterns, got, err, tt.want, tt.err)
		}
	}
	if _, err := Targets(t.Context(), "./no-such-package"); err == nil {
		t.Error("a missing package named")
	}
	for path, want := range map[string]string{"example.com/fn/v2": "fn", "example.com/fn": "fn", "v2": "v2", "example.com/v1": "v1"} {
		if got := zipBase(path); got != want {
			t.Errorf("zipBase(%q) = %q, want %q", path, got, want)
		}
	}
	for s, want := range map[string]bool{"v2": true, "v10": true, "v1": false, "v0": false, "v02": false, "v": false, "fn": false, "v2x": false} {
		if majorSuffix(s) != want {
			t.Errorf("majorSuffix(%q) = %v", s, !want)
		}
	}
	err := sameNames([]Target{{"example.com/a/fn", "fn"}, {"example.com/b", "b"}, {"example.com/c/fn/v2", "fn"}})
	if !errors.Is(err, errSameName) || !strings.Contains(err.Error(), "example.com/a/fn and example.com/c/fn/v2 would both write fn-ARCH.zip") {
		t.Errorf("two packages named fn: %v", err)
	}
}

// TestUsageFromRoot: the command as the docs write it, from the
// repository's root, and its exit statuses.
func TestUsageFromRoot(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), "go", "run", "./cmd/lmigo-pack", "-h")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "usage: lmigo-pack") {
		t.Fatalf("go run ./cmd/lmigo-pack -h: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"-o", t.TempDir(), "-name", "fn", "../..."}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "-name names the zips of one package, and 2 were given") {
		t.Errorf("-name with two packages: status %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run(t.Context(), []string{"-o", t.TempDir(), "-arch", "arm64,riscv64", "."}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), `-arch "riscv64": unsupported GOARCH`) {
		t.Errorf("an unknown GOARCH: status %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run(t.Context(), []string{"-o", t.TempDir(), "github.com/lmigo/lmigo/concurrent"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "not a main package") {
		t.Errorf("a library package: status %d, %s", code, stderr.String())
	}
}

// TestSeveralPackages: one call packs every main package it names, each
// in zips named after its directory; a wildcard skips library packages.
func TestSeveralPackages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	// ../... names cmd/bootstrap, cmd/bootstrap/demo (a library) and cmd/lmigo-pack.
	if code := run(t.Context(), []string{"-o", dir, "-arch", "amd64", "../...", refPackage}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d\n%s", code, stderr.String())
	}
	want := []string{filepath.Join(dir, "bootstrap-amd64.zip"), filepath.Join(dir, "lmigo-pack-amd64.zip")}
	if got := strings.Fields(stdout.String()); !slices.Equal(got, want) {
		t.Errorf("printed %q, want %q", got, want)
	}
	for _, p := range want {
		checkZip(t, readFile(t, p))
	}
}
