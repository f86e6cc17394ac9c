package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lmigo/lmigo/loadtest/lambdainvoke"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// Targets.
const (
	targetFake   = "fake"   // a bootstrap exec'd against the fake Runtime API in this process
	targetRIE    = "rie"    // a bootstrap run by the AWS emulator in LMI mode
	targetLambda = "lambda" // a deployed function, through the Lambda Invoke API
)

// Runtimes the load test knows by name.
const (
	rtLmigo = "lmigo"         // the typed handler, cmd/bootstrap
	rtRaw   = "lmigo-raw"     // the raw handler, loadtest/rawbootstrap
	rtRef   = "aws-lambda-go" // the reference, loadtest/refbootstrap
	rtFloor = "floor"         // not a runtime: the least work, loadtest/floorbootstrap
	// A lambda.Handler of the user's own (demo.Invoker), under each.
	rtHandler    = "lmigo-handler"         // loadtest/handlerbootstrap
	rtRefHandler = "aws-lambda-go-handler" // loadtest/refhandlerbootstrap
	// The user's own function (run -bootstrap without -runtime, size).
	rtFunction = "function"
)

// Packages built for the runtimes, and the load test itself.
const (
	pkgLmigo    = "github.com/lmigo/lmigo/cmd/bootstrap"
	pkgRaw      = "github.com/lmigo/lmigo/loadtest/rawbootstrap"
	pkgRef      = "github.com/lmigo/lmigo/loadtest/refbootstrap"
	pkgFloor    = "github.com/lmigo/lmigo/loadtest/floorbootstrap"
	pkgHandler  = "github.com/lmigo/lmigo/loadtest/handlerbootstrap"
	pkgRefHand  = "github.com/lmigo/lmigo/loadtest/refhandlerbootstrap"
	pkgLoadtest = "github.com/lmigo/lmigo/loadtest"
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
	return pkgLmigo, pkgRef
}

// echoes reports whether the runtime named so echoes each invocation's
// Lambda-Runtime-Invocation-Id on its answers: lmigo's runtimes and the
// floor do, aws-lambda-go does not.
func echoes(runtime string) bool { return strings.HasPrefix(runtime, rtLmigo) || runtime == rtFloor }

// runtimeSpec is one runtime under test.
type runtimeSpec struct {
	Name     string `json:"name"`
	Binary   string `json:"binary,omitempty"`   // fake, rie
	Function string `json:"function,omitempty"` // lambda
	// SurvivesPanic is false for aws-lambda-go, which exits after a panic;
	// workloads that panic are refused for it.
	SurvivesPanic bool `json:"survivesPanic"`
}

// serves says whether rt answers workload w: the floor serves tiny,
// size:S and wait:D only, and exits on anything else.
func (rt runtimeSpec) serves(w load.Workload) bool { return rt.Name != rtFloor || w.Floor }

// instance is one runtime started on a target, ready for load.
type instance struct {
	inv   load.Invoker
	ready time.Duration // exec (fake) or emulator start (rie) to init done; 0 when unknown
	// readyCPU is the runtime's CPU time by then (fake): on a busy machine
	// ready is a share of the CPU, readyCPU the runtime's own cost.
	readyCPU time.Duration
	pid      int // the runtime's process, 0 when not measurable (lambda)
	// procs lists the processes measured as the runtime: pid alone for
	// the runtimes built here, the whole group for a user's function.
	procs func() []int
	// helpers are the other processes serving the runtime (the emulator),
	// whose CPU is the driver's.
	helpers []int
	api     *rapitest.Server
	gc      *measure.GCCounter // nil when GCs cannot be counted
	stop    func() error
	// exited is closed when the function's process (fake) or the
	// emulator (rie) has ended, nil when that cannot be seen (lambda);
	// exitState then says how, "" when unknown.
	exited    <-chan struct{}
	exitState func() string
	rie       bool // in the emulator, whose own lines share the output
}

// cpu is the CPU time of the runtime's processes.
func (in *instance) cpu() (time.Duration, error) {
	if in.procs == nil {
		return 0, errors.New("no process")
	}
	return measure.ReadGroupCPU(in.procs())
}

// status is the memory of the runtime's processes.
func (in *instance) status() (measure.Status, error) {
	if in.procs == nil {
		return measure.Status{}, errors.New("no process")
	}
	return measure.ReadGroupStatus(in.procs())
}

// tail returns the last output of the runtime, for error messages.
func (in *instance) tail() string {
	if in.gc == nil {
		return ""
	}
	t := in.gc.Tail()
	if len(t) > 2048 {
		t = t[len(t)-2048:]
	}
	return t
}

// bootstrapEnv is the environment of a runtime besides
// AWS_LAMBDA_RUNTIME_API: what Lambda sets on a managed instance, gctrace
// for the GC count, and the user's -env pairs last.
func bootstrapEnv(cfg *config, n int) []string {
	env := []string{
		"AWS_LAMBDA_MAX_CONCURRENCY=" + strconv.Itoa(n),
		"AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_NAME=lmigo-loadtest",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(cfg.MemoryMB),
		"AWS_LAMBDA_LOG_LEVEL=WARN",
		"AWS_REGION=us-east-1",
		"GODEBUG=gctrace=1",
	}
	if ev, ok := strings.CutPrefix(cfg.Workload, load.EventPrefix); ok {
		env = append(env, events.EnvVar+"="+ev) // the events bootstraps' handler
	}
	return append(env, cfg.Env...)
}

// start starts rt on cfg's target with N = n. pinCPU >= 0 runs it on that
// CPU only.
func start(ctx context.Context, cfg *config, rt runtimeSpec, n, pinCPU int) (*instance, error) {
	switch cfg.Target {
	case targetRIE:
		return startRIE(ctx, cfg, rt, n)
	case targetLambda:
		return startLambda(ctx, cfg, rt)
	}
	return startFake(ctx, cfg, rt, n, pinCPU)
}

// output is where a runtime's stdout and stderr go: to gc, and for the
// user's function to cfg.fnOut as well.
func output(cfg *config, rt runtimeSpec, gc *measure.GCCounter) io.Writer {
	if cfg.fnOut == nil || rt.Name != rtFunction {
		return gc
	}
	cfg.fnOut.rie = cfg.Target == targetRIE
	return io.MultiWriter(gc, cfg.fnOut)
}

// startFake execs rt.Binary against a new fake Runtime API and waits until
// it has N polls outstanding.
func startFake(ctx context.Context, cfg *config, rt runtimeSpec, n, pinCPU int) (*instance, error) {
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Timeout: cfg.Timeout})
	if err != nil {
		return nil, err
	}
	argv := []string{rt.Binary}
	if pinCPU >= 0 {
		// This process is pinned already and the child would inherit it;
		// taskset says so explicitly, and execs in place (same PID).
		if ts, err := exec.LookPath("taskset"); err == nil {
			argv = []string{ts, "-c", strconv.Itoa(pinCPU), rt.Binary}
		}
	}
	gc := &measure.GCCounter{}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(bootstrapEnv(cfg, n), "AWS_LAMBDA_RUNTIME_API="+api.Addr())
	cmd.Stdout = output(cfg, rt, gc)
	cmd.Stderr = cmd.Stdout // one pipe: lines of both stay whole
	cmd.SysProcAttr = groupAttr()
	cmd.WaitDelay = time.Second
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		_ = api.Close()
		return nil, fmt.Errorf("start %s: %w", rt.Binary, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	pid := cmd.Process.Pid
	stop := sync.OnceValue(func() error {
		err := endGroup(pid, 2*time.Second)
		<-exited
		return errors.Join(err, api.Close())
	})
	in := &instance{inv: fakeInvoker{api}, pid: pid, procs: func() []int { return []int{pid} }, api: api, gc: gc, stop: stop,
		exited: exited, exitState: func() string {
			select {
			case <-exited: // Wait has set ProcessState
				return cmd.ProcessState.String()
			default:
				return ""
			}
		}}
	if rt.Name == rtFunction {
		in.procs = func() []int { return measure.GroupMembers(pid) }
	}

	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	go func() {
		select {
		case <-exited:
			cancel()
		case <-wctx.Done():
		}
	}()
	err = api.WaitPolls(wctx, n)
	in.ready = time.Since(t0)
	in.readyCPU, _ = in.cpu()
	if err != nil {
		select {
		case <-exited:
			err = fmt.Errorf("%s exited during init (%v)", rt.Name, cmd.ProcessState)
		default:
		}
		_ = stop()
		return nil, fmt.Errorf("%s did not reach %d polls outstanding: %w\n%s", rt.Name, n, err, in.tail())
	}
	return in, nil
}

// rieRuntimeUID is the uid the emulator runs the runtime as.
const rieRuntimeUID = 993

// startRIE runs rt.Binary in the AWS emulator in LMI mode, measured from
// outside through the runtime's process in the emulator's PID namespace.
func startRIE(ctx context.Context, cfg *config, rt runtimeSpec, n int) (*instance, error) {
	gc := &measure.GCCounter{}
	out := output(cfg, rt, gc)
	t0 := time.Now()
	e, err := rie.Start(ctx, rie.Options{
		Bootstrap:      rt.Binary,
		MaxConcurrency: n,
		Env:            bootstrapEnv(cfg, n),
		Timeout:        cfg.Timeout,
		Stdout:         out,
		Stderr:         out,
	})
	if err != nil {
		return nil, err
	}
	in := &instance{ready: time.Since(t0), gc: gc, stop: e.Stop, exited: e.Done(), rie: true}
	for _, p := range e.Processes() {
		if p.UID == rieRuntimeUID {
			if in.pid == 0 {
				in.pid = p.PID
			}
		} else {
			in.helpers = append(in.helpers, p.PID)
		}
	}
	if in.pid == 0 {
		_ = e.Stop()
		return nil, fmt.Errorf("rie: runtime process of %s not found\n%s", rt.Name, gc.Tail())
	}
	pid := in.pid
	in.procs = func() []int { return []int{pid} }
	if rt.Name == rtFunction {
		// The emulator ends its namespace, and the function's processes
		// with it; all those of the runtime's uid are the function.
		in.procs = func() []int {
			var pids []int
			for _, p := range e.Processes() {
				if p.UID == rieRuntimeUID {
					pids = append(pids, p.PID)
				}
			}
			return pids
		}
	}
	in.inv = rieInvoker{e}
	if cfg.SDK {
		li, err := lambdainvoke.New(ctx, lambdainvoke.Options{
			FunctionName: "function",
			Endpoint:     strings.TrimSuffix(e.URL(), "/2015-03-31/functions/function/invocations"),
			Static:       true,
		})
		if err != nil {
			_ = e.Stop()
			return nil, err
		}
		in.inv = sdkInvoker{li}
		in.stop = func() error { li.Close(); return e.Stop() }
	}
	return in, nil
}

// startLambda invokes a deployed function; nothing of it can be measured
// from here but what its callers see.
func startLambda(ctx context.Context, cfg *config, rt runtimeSpec) (*instance, error) {
	li, err := lambdainvoke.New(ctx, lambdainvoke.Options{
		FunctionName: rt.Function,
		Qualifier:    cfg.Qualifier,
		Region:       cfg.Region,
		Endpoint:     cfg.Endpoint,
	})
	if err != nil {
		return nil, err
	}
	return &instance{inv: sdkInvoker{li}, stop: func() error { li.Close(); return nil }}, nil
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

// buildAll builds the packages in parallel, pkgs[i] into outs[i].
func buildAll(ctx context.Context, goarch string, pkgs, outs []string) error {
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

// buildMissing builds the bootstrap of every runtime of rts without a
// binary (for cfg.Workload, see bootstrapPkgs) into a new temporary
// directory and sets its Binary. cleanup removes what was built. flagName
// starts the error for a runtime with no bootstrap for the workload.
func buildMissing(ctx context.Context, cfg *config, rts []runtimeSpec, flagName string) (cleanup func(), err error) {
	pkgLm, pkgAWS := bootstrapPkgs(cfg.Workload)
	for _, name := range []string{rtRaw, rtHandler, rtRefHandler} {
		if pkgLm != pkgLmigo && slices.ContainsFunc(rts, func(r runtimeSpec) bool { return r.Name == name && r.Binary == "" }) {
			return nil, fmt.Errorf("%s %s serves the demo workloads only, not %s", flagName, name, cfg.Workload)
		}
	}
	pkgOf := map[string]string{rtLmigo: pkgLm, rtRaw: pkgRaw, rtRef: pkgAWS, rtFloor: pkgFloor, rtHandler: pkgHandler, rtRefHandler: pkgRefHand}
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
	fmt.Fprintf(cfg.stderr, "building %s ...\n", strings.Join(pkgs, ", "))
	if err := buildAll(ctx, hostArch(), pkgs, outs); err != nil {
		cleanup()
		return nil, err
	}
	return cleanup, nil
}
