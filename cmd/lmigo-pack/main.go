// Command lmigo-pack builds a Lambda function's main package for the
// provided.al2023 runtime and zips it, one zip per architecture, named
// after the package:
//
//	lmigo-pack [-o dist] [-arch arm64,amd64] [-name NAME] [package ...]
//
// `lmigo-pack -o dist ./cmd/myfn` writes dist/myfn-arm64.zip and
// dist/myfn-amd64.zip. Several packages, or a pattern such as ./cmd/...,
// pack each main package in one call, each in zips of its own name; a
// library a pattern matches is skipped, one named outright refused. Two
// packages whose zips would share a name are refused, and so is -name
// with more than one package: either would overwrite a zip. The package
// defaults to the one in the current directory, as for go build; it is
// built in the module of the current directory. From a module that
// requires lmigo and lists the command as a tool (`go get -tool
// github.com/lmigo/lmigo/cmd/lmigo-pack`), it runs as `go tool
// lmigo-pack`; the name is not pack, which `go tool` reserves for Go's own
// archiver. `make package` runs it for the reference bootstrap.
//
// # What is in a zip
//
// One entry, "bootstrap", mode 0755 recorded as Unix permissions (Lambda
// runs the file as it unpacks it, so the executable bit must be in the
// zip). The binary is built with CGO_ENABLED=0 (static: provided.al2023
// runs it as it is), -tags lambda.norpc (drops aws-lambda-go's unused
// net/rpc mode), -trimpath and -buildvcs=false (no build paths, no VCS
// stamp), and -ldflags='-s -w' (no symbol table, no DWARF).
//
// # Reproducible
//
// The same source with the same Go toolchain gives the same bytes: the
// entry's time is fixed (1980-01-01, the zip epoch), there is one entry,
// and the build ignores the caller's GOFLAGS, GOAMD64 and GOARM64 (it
// pins the defaults, v1 and v8.0). The package test checks the bytes of
// two builds.
//
// Why Go and not zip(1): archive/zip gives the entry's mode, time and
// order without depending on the zip version, umask or time zone of the
// machine, needs nothing installed, and the test calls the same code.
// Only the standard library is linked into it, so a function's module
// gains no requirement by using it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = "usage: lmigo-pack [-o dir] [-arch list] [-name name] [package ...]\n\n" +
	"Builds each main package (default: the current directory) for linux and\n" +
	"writes dir/NAME-ARCH.zip for each architecture, NAME being the package's\n" +
	"last path element unless -name is given (one package only). A pattern\n" +
	"with ... packs the main packages it matches.\n\n"

// run is the command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lmigo-pack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "dist", "output directory")
	archList := fs.String("arch", "arm64,amd64", "comma-separated GOARCH values: arm64, amd64")
	name := fs.String("name", "", "the zips' name before -ARCH.zip, for one package (default: the package's last path element)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	var arches []string
	for a := range strings.SplitSeq(*archList, ",") {
		a = strings.TrimSpace(a)
		if _, ok := archLevel[a]; !ok {
			fmt.Fprintf(stderr, "lmigo-pack: -arch %q: %v\n", a, errArch)
			return 2
		}
		arches = append(arches, a)
	}
	targets, err := Targets(ctx, patterns...)
	if err != nil {
		fmt.Fprintln(stderr, "lmigo-pack:", err)
		return 1
	}
	if *name != "" {
		if len(targets) > 1 {
			fmt.Fprintf(stderr, "lmigo-pack: -name names the zips of one package, and %d were given: leave -name out, and each package's zips take its directory's name\n", len(targets))
			return 2
		}
		targets[0].Name = *name
	}
	for _, t := range targets {
		for _, arch := range arches {
			p, err := Package(ctx, t.ImportPath, t.Name, arch, *out)
			if err != nil {
				fmt.Fprintln(stderr, "lmigo-pack:", err)
				return 1
			}
			fmt.Fprintln(stdout, p)
		}
	}
	return 0
}
