package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lmigo/lmigo/loadtest/target"
)

// pkgLoadtest is the load test itself, built for a host without Go.
const pkgLoadtest = "github.com/lmigo/lmigo/loadtest"

// buildMain is `loadtest build`: cross-builds, for linux on each -arch, the
// load test itself and the three bootstraps, with zips ready to deploy, so that
// a host without Go (an EC2 instance) can run the comparison.
func buildMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("loadtest build", flag.ContinueOnError)
	def := os.Getenv("GOARCH")
	if def == "" {
		def = "arm64,amd64"
	}
	arches := fs.String("arch", def, "comma-separated GOARCH values (arm64, amd64); default $GOARCH, else both")
	out := fs.String("o", "dist/loadtest", "output directory; each architecture gets a subdirectory")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadtest build [-arch arm64,amd64] [-o dir]\n\nWrites DIR/ARCH/{loadtest, bootstrap-lmigo, bootstrap-lmigo-raw, bootstrap-aws-lambda-go, bootstrap-floor, lmigo.zip, aws-lambda-go.zip}.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, arch := range strings.Split(*arches, ",") {
		arch = strings.TrimSpace(arch)
		if arch != "arm64" && arch != "amd64" {
			return fmt.Errorf("-arch %q: want arm64 or amd64", arch)
		}
		dir := filepath.Join(*out, arch)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		lm, ref := filepath.Join(dir, "bootstrap-lmigo"), filepath.Join(dir, "bootstrap-aws-lambda-go")
		if err := target.Build(ctx, arch,
			[]string{pkgLoadtest, target.PkgLmigo, target.PkgLmigoRaw, target.PkgAWSLambdaGo, target.PkgFloor},
			[]string{filepath.Join(dir, "loadtest"), lm, filepath.Join(dir, "bootstrap-lmigo-raw"), ref, filepath.Join(dir, "bootstrap-floor")}); err != nil {
			return err
		}
		for zipName, bin := range map[string]string{"lmigo.zip": lm, "aws-lambda-go.zip": ref} {
			if err := target.Zip(filepath.Join(dir, zipName), bin); err != nil {
				return err
			}
		}
		fmt.Printf("linux/%s: %s/{loadtest,bootstrap-lmigo,bootstrap-lmigo-raw,bootstrap-aws-lambda-go,bootstrap-floor,lmigo.zip,aws-lambda-go.zip}\n", arch, dir)
	}
	return nil
}
