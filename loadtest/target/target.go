package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lmigo/lmigo/loadtest/lambdainvoke"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// Targets.
const (
	Fake   = "fake"   // a bootstrap exec'd against the fake Runtime API in this process
	RIE    = "rie"    // a bootstrap run by the AWS emulator in LMI mode
	Lambda = "lambda" // a deployed function, through the Lambda Invoke API
)

// Options is where and how a runtime runs, from flags.
type Options struct {
	Target   string        `json:"target"` // fake, rie or lambda
	MemoryMB int           `json:"memoryMB"`
	Timeout  time.Duration `json:"-"` // of an invocation
	Env      []string      `json:"env,omitempty"`
	// A deployed function, and the emulator's SDK client.
	Region    string `json:"region,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	Qualifier string `json:"qualifier,omitempty"`
	SDK       bool   `json:"sdk,omitempty"`
	// Event names the event the events bootstraps answer (workload
	// event:NAME); "" for the others.
	Event string `json:"-"`
	// Output takes the output of the user's function (run, size); nil:
	// only the GC count reads it.
	Output *Output `json:"-"`
}

// Environ is the environment of a runtime besides
// AWS_LAMBDA_RUNTIME_API: what Lambda sets on a managed instance, gctrace
// for the GC count, and the pairs of o.Env last.
func (o Options) Environ(n int) []string {
	env := []string{
		"AWS_LAMBDA_MAX_CONCURRENCY=" + strconv.Itoa(n),
		"AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_NAME=lmigo-loadtest",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(o.MemoryMB),
		"AWS_LAMBDA_LOG_LEVEL=WARN",
		"AWS_REGION=us-east-1",
		"GODEBUG=gctrace=1",
	}
	if o.Event != "" {
		env = append(env, events.EnvVar+"="+o.Event) // the events bootstraps' handler
	}
	return append(env, o.Env...)
}

// Start starts rt on o's target with N = n. pinCPU >= 0 runs it on that
// CPU only.
func Start(ctx context.Context, o Options, rt Runtime, n, pinCPU int) (*Instance, error) {
	switch o.Target {
	case RIE:
		return startRIE(ctx, o, rt, n)
	case Lambda:
		return startLambda(ctx, o, rt)
	}
	return startFake(ctx, o, rt, n, pinCPU)
}

// output is where a runtime's stdout and stderr go: to gc, and for the
// user's function to o.Output as well.
func (o Options) output(rt Runtime, gc *measure.GCCounter) io.Writer {
	if o.Output == nil || rt.Name != Function {
		return gc
	}
	o.Output.rie = o.Target == RIE
	return io.MultiWriter(gc, o.Output)
}

// emulatorOutput is where the emulator's own stderr goes: beside the
// user's function's output, in a file of its own, or nowhere.
func (o Options) emulatorOutput(rt Runtime) io.Writer {
	if o.Output == nil || rt.Name != Function {
		return io.Discard
	}
	return o.Output.Emulator()
}

// startFake execs rt.Binary against a new fake Runtime API and waits until
// it has N polls outstanding.
func startFake(ctx context.Context, o Options, rt Runtime, n, pinCPU int) (*Instance, error) {
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Timeout: o.Timeout})
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
	cmd.Env = append(o.Environ(n), "AWS_LAMBDA_RUNTIME_API="+api.Addr())
	cmd.Stdout = o.output(rt, gc)
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
	in := &Instance{Inv: fakeInvoker{api}, PID: pid, Procs: func() []int { return []int{pid} }, API: api, GC: gc, halt: stop,
		exited: exited, exitState: func() string {
			select {
			case <-exited: // Wait has set ProcessState
				return cmd.ProcessState.String()
			default:
				return ""
			}
		}}
	if rt.Name == Function {
		in.Procs = func() []int { return measure.GroupMembers(pid) }
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
	in.Ready = time.Since(t0)
	in.ReadyCPU, _ = in.CPU()
	if err != nil {
		select {
		case <-exited:
			err = fmt.Errorf("%s exited during init (%v)", rt.Name, cmd.ProcessState)
		default:
		}
		_ = stop()
		return nil, fmt.Errorf("%s did not reach %d polls outstanding: %w\n%s", rt.Name, n, err, in.Tail())
	}
	return in, nil
}

// rieRuntimeUID is the uid the emulator runs the runtime as.
const rieRuntimeUID = 993

// startRIE runs rt.Binary in the AWS emulator in LMI mode, measured from
// outside through the runtime's process in the emulator's PID namespace.
func startRIE(ctx context.Context, o Options, rt Runtime, n int) (*Instance, error) {
	gc := &measure.GCCounter{}
	// The emulator relays the runtime's stdout and stderr, whole lines,
	// to its stdout; its own stderr holds its own GCs (GODEBUG reaches it
	// too) and is kept apart, never counted as the function's.
	t0 := time.Now()
	e, err := rie.Start(ctx, rie.Options{
		Bootstrap:      rt.Binary,
		MaxConcurrency: n,
		Env:            o.Environ(n),
		Timeout:        o.Timeout,
		Stdout:         &lines{w: o.output(rt, gc)},
		Stderr:         &lines{w: o.emulatorOutput(rt)},
	})
	if err != nil {
		return nil, err
	}
	in := &Instance{Ready: time.Since(t0), GC: gc, halt: e.Stop, exited: e.Done(), rie: true}
	for _, p := range e.Processes() {
		if p.UID == rieRuntimeUID {
			if in.PID == 0 {
				in.PID = p.PID
			}
		} else {
			in.Helpers = append(in.Helpers, p.PID)
		}
	}
	if in.PID == 0 {
		_ = e.Stop()
		return nil, fmt.Errorf("rie: runtime process of %s not found\n%s", rt.Name, gc.Tail())
	}
	pid := in.PID
	in.Procs = func() []int { return []int{pid} }
	if rt.Name == Function {
		// The emulator ends its namespace, and the function's processes
		// with it; all those of the runtime's uid are the function.
		in.Procs = func() []int {
			var pids []int
			for _, p := range e.Processes() {
				if p.UID == rieRuntimeUID {
					pids = append(pids, p.PID)
				}
			}
			return pids
		}
	}
	in.Inv = rieInvoker{e}
	if o.SDK {
		li, err := lambdainvoke.New(ctx, lambdainvoke.Options{
			FunctionName: "function",
			Endpoint:     strings.TrimSuffix(e.URL(), "/2015-03-31/functions/function/invocations"),
			Static:       true,
		})
		if err != nil {
			_ = e.Stop()
			return nil, err
		}
		in.Inv = sdkInvoker{li}
		in.halt = func() error { li.Close(); return e.Stop() }
	}
	return in, nil
}

// lines passes a stream on in whole lines: the emulator's stdout and
// stderr share one writer, and a line of one must not be cut by the
// other's. A line longer than maxLevelLine passes on in pieces; one
// without its newline when the stream ends is left out (the emulator
// ends each of its lines).
type lines struct {
	w   io.Writer
	buf []byte
}

func (l *lines) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	end := bytes.LastIndexByte(l.buf, '\n') + 1
	if end == 0 && len(l.buf) > maxLevelLine {
		end = len(l.buf)
	}
	if end > 0 {
		_, _ = l.w.Write(l.buf[:end])
		l.buf = append(l.buf[:0], l.buf[end:]...)
	}
	return len(p), nil
}

// startLambda invokes a deployed function; nothing of it can be measured
// from here but what its callers see.
func startLambda(ctx context.Context, o Options, rt Runtime) (*Instance, error) {
	li, err := lambdainvoke.New(ctx, lambdainvoke.Options{
		FunctionName: rt.Function,
		Qualifier:    o.Qualifier,
		Region:       o.Region,
		Endpoint:     o.Endpoint,
	})
	if err != nil {
		return nil, err
	}
	return &Instance{Inv: sdkInvoker{li}, halt: func() error { li.Close(); return nil }}, nil
}
