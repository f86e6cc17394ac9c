package target

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lmigo/lmigo/loadtest/load"
)

// Packages built for the runtimes, and the load test itself.
const (
	PkgLmigo       = "github.com/lmigo/lmigo/cmd/bootstrap"
	PkgLmigoRaw    = "github.com/lmigo/lmigo/loadtest/rawbootstrap"
	PkgAWSLambdaGo = "github.com/lmigo/lmigo/loadtest/refbootstrap"
	PkgFloor       = "github.com/lmigo/lmigo/loadtest/floorbootstrap"
	pkgHandler     = "github.com/lmigo/lmigo/loadtest/handlerbootstrap"
	pkgRefHand     = "github.com/lmigo/lmigo/loadtest/refhandlerbootstrap"
	// The realistic events (workload event:NAME) have bootstraps of their
	// own, so that the reference bootstraps link no events types.
	pkgEventsLmigo = "github.com/lmigo/lmigo/loadtest/events/lmigo"
	pkgEventsRef   = "github.com/lmigo/lmigo/loadtest/events/awslambdago"
)

// bootstrapPkgs are the packages of lmigo's and aws-lambda-go's bootstraps
// for a workload.
func bootstrapPkgs(workload string) (lmigo, ref string) {
	if strings.HasPrefix(workload, load.EventPrefix) {
		return pkgEventsLmigo, pkgEventsRef
	}
	return PkgLmigo, PkgAWSLambdaGo
}

// buildFlags are lmigo's release flags (see the Makefile's build target),
// used for every runtime so that they differ only in their code, except
// that the symbol table is kept (no -s): perf names functions by it
// (-profile), and it is not loaded when the binary runs.
var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-w", "-buildvcs=false"}

// moduleRoot finds the lmigo module from the working directory: builds
// need its source.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the lmigo module: run from its source tree, or pass -lmigo and -ref with prebuilt bootstraps")
	}
	return filepath.Dir(mod), nil
}

// goBuild builds pkg for linux/goarch into out, statically.
func goBuild(ctx context.Context, root, pkg, goarch, out string) error {
	args := append(append([]string{"build"}, buildFlags...), "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s (linux/%s): %w\n%s", pkg, goarch, err, b)
	}
	return nil
}

// Build builds the packages in parallel, pkgs[i] into outs[i].
func Build(ctx context.Context, goarch string, pkgs, outs []string) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	errs := make([]error, len(pkgs))
	var wg sync.WaitGroup
	for i := range pkgs {
		wg.Go(func() { errs[i] = goBuild(ctx, root, pkgs[i], goarch, outs[i]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BuildMissing builds the bootstrap of every runtime of rts without a
// binary (for workload, see bootstrapPkgs) into a new temporary
// directory and sets its Binary. cleanup removes what was built. flagName
// starts the error for a runtime with no bootstrap for the workload.
func BuildMissing(ctx context.Context, rts []Runtime, workload, flagName string, stderr io.Writer) (cleanup func(), err error) {
	pkgLm, pkgAWS := bootstrapPkgs(workload)
	for _, name := range []string{LmigoRaw, LmigoHandler, AWSLambdaGoHandler} {
		if pkgLm != PkgLmigo && slices.ContainsFunc(rts, func(r Runtime) bool { return r.Name == name && r.Binary == "" }) {
			return nil, fmt.Errorf("%s %s serves the demo workloads only, not %s", flagName, name, workload)
		}
	}
	pkgOf := map[string]string{Lmigo: pkgLm, LmigoRaw: PkgLmigoRaw, AWSLambdaGo: pkgAWS, Floor: PkgFloor, LmigoHandler: pkgHandler, AWSLambdaGoHandler: pkgRefHand}
	var pkgs, outs []string
	dir := ""
	for i := range rts {
		if rts[i].Binary != "" {
			continue
		}
		if dir == "" {
			if dir, err = os.MkdirTemp("", "lmigo-loadtest-"); err != nil {
				return nil, err
			}
		}
		rts[i].Binary = filepath.Join(dir, "bootstrap-"+rts[i].Name)
		pkgs, outs = append(pkgs, pkgOf[rts[i].Name]), append(outs, rts[i].Binary)
	}
	if dir == "" {
		return func() {}, nil
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	fmt.Fprintf(stderr, "building %s ...\n", strings.Join(pkgs, ", "))
	if err := Build(ctx, HostArch(), pkgs, outs); err != nil {
		cleanup()
		return nil, err
	}
	return cleanup, nil
}

// HostArch is the architecture of the binaries a run execs here.
func HostArch() string { return runtime.GOARCH }

// Zip writes a Lambda deployment package: bin as "bootstrap",
// executable.
func Zip(path, bin string) (err error) {
	src, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: time.Now()}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, src); err != nil {
		return err
	}
	return zw.Close()
}
