// Command pack builds a Lambda function's bootstrap for the provided.al2023
// runtime and zips it, one zip per architecture:
//
//	go run ./deploy/pack [-o dist] [-arch arm64,amd64] [package]
//
// writes dist/bootstrap-arm64.zip and dist/bootstrap-amd64.zip for the main
// package (default: the reference bootstrap, ./cmd/bootstrap). `make
// package` runs it.
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
// It lives under deploy/, away from the runtime's packages, and only the
// standard library is linked into it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

func main() {
	os.Exit(run())
}

func run() int {
	out := flag.String("o", "dist", "output directory")
	arches := flag.String("arch", "arm64,amd64", "comma-separated GOARCH values")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./deploy/pack [-o dir] [-arch list] [package]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	pkg := DefaultPackage
	switch flag.NArg() {
	case 0:
	case 1:
		pkg = flag.Arg(0)
	default:
		flag.Usage()
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, arch := range strings.Split(*arches, ",") {
		p, err := Package(ctx, pkg, strings.TrimSpace(arch), *out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pack:", err)
			return 1
		}
		fmt.Println(p)
	}
	return 0
}
