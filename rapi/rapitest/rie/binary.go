package rie

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// EmulatorModule is the emulator version this package was written against;
// `go install` it to get the binary that Binary finds.
const EmulatorModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

const emulatorName = "aws-lambda-rie"

// Binary returns the path of aws-lambda-rie: the first hit on PATH, else
// in $(go env GOBIN), else in the bin directory of each $(go env GOPATH)
// entry. It wraps ErrNotFound when there is none.
func Binary() (string, error) {
	if p, err := exec.LookPath(emulatorName); err == nil {
		return filepath.Abs(p)
	}
	var dirs []string
	if out, err := goEnv("GOBIN", "GOPATH"); err == nil {
		lines := strings.Split(out, "\n")
		if len(lines) > 0 && lines[0] != "" {
			dirs = append(dirs, lines[0])
		}
		if len(lines) > 1 {
			for _, p := range filepath.SplitList(lines[1]) {
				if p != "" {
					dirs = append(dirs, filepath.Join(p, "bin"))
				}
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, emulatorName)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (looked on PATH and in %s)", ErrNotFound, strings.Join(dirs, ", "))
}

// Build compiles the main package pkg (a pattern as `go build` takes it,
// resolved from the current directory) into the file out, the way a
// bootstrap is built for Lambda: CGO_ENABLED=0 and the lambda.norpc tag
// (which drops aws-lambda-go's unused net/rpc mode).
func Build(ctx context.Context, pkg, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("rie: build %s: %w", pkg, err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-tags", "lambda.norpc", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("rie: build %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	return nil
}

func goEnv(names ...string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(goBin, append([]string{"env"}, names...)...).Output()
	return strings.TrimRight(string(out), "\n"), err
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
