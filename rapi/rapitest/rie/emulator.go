package rie

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures one emulator.
type Options struct {
	// Bootstrap is the path of the runtime binary (required). It is copied
	// into the emulator's private /var/task/bootstrap with mode 0755, so it
	// may live anywhere and need not be readable by uid 993.
	Bootstrap string

	// MaxConcurrency is N: AWS_LAMBDA_MAX_CONCURRENCY of the emulator,
	// which turns its LMI mode on and hands the same number to the runtime.
	// Values below 1 mean 1. An AWS_LAMBDA_MAX_CONCURRENCY in Env wins.
	MaxConcurrency int

	// Env holds KEY=VALUE pairs for the emulator's environment, which the
	// emulator passes on to the runtime; later pairs win. The host's
	// environment is not inherited. The package doc lists which names the
	// emulator reads, rewrites or drops.
	Env []string

	// Timeout is the function timeout (AWS_LAMBDA_FUNCTION_TIMEOUT, which
	// the emulator also uses as the init timeout), rounded up to whole
	// seconds. Zero means the emulator's default of 300 s.
	Timeout time.Duration

	// Stdout and Stderr, when set, get a copy of the emulator's output as
	// it arrives. They must stay usable until Stop returns.
	Stdout, Stderr io.Writer

	// Emulator is the path of aws-lambda-rie. Empty means Binary().
	Emulator string

	// StartTimeout bounds Start when ctx allows longer. Zero means 30 s.
	StartTimeout time.Duration

	// Exec, when not empty, is the command that runs the bootstrap, as
	// `go test -exec` runs test binaries: the emulator then starts a
	// script, /var/runtime/bootstrap, that execs Exec followed by
	// /var/task/bootstrap. It runs a bootstrap built for another
	// architecture through qemu-user where binfmt_misc does not, e.g.
	// []string{"qemu-aarch64-static"}. The first word is looked up on
	// PATH. Nil means the words of $LMIGO_RIE_EXEC (the Makefile's
	// test-arm64 sets it), or none.
	Exec []string
}

// ExecEnv names the variable that supplies Options.Exec when it is nil.
const ExecEnv = "LMIGO_RIE_EXEC"

const (
	invokePath        = "/2015-03-31/functions/function/invocations"
	defaultStartLimit = 30 * time.Second
	// stopGrace exceeds the emulator's own longest shutdown (a 15 s cap on
	// draining aborted invocations, then 2 s for the runtime), so that on
	// a loaded machine only an emulator that hangs is killed.
	stopGrace       = 20 * time.Second
	startAttempts   = 3
	maxResponseBody = 16 << 20
)

// Emulator is one running aws-lambda-rie in LMI mode with its runtime. Its
// methods are safe for concurrent use.
type Emulator struct {
	cmd        *exec.Cmd
	pgid       int
	invokeURL  string
	rieAddr    string
	runtimeAPI string
	client     *http.Client
	transport  *http.Transport
	logs       *logBuffer

	exited  chan struct{} // closed when the unshare process has been reaped
	waitErr error         // set before exited is closed

	nsFile *os.File // pins the PID namespace so its inode cannot be reused
	ns     string   // "pid:[inode]" of the emulator's namespace

	stopOnce sync.Once
	stopErr  error
	stopped  chan struct{}
}

// Start runs aws-lambda-rie in LMI mode inside private mount and PID
// namespaces, with opts.Bootstrap as its runtime, and returns once the
// runtime's init has finished: Invoke then reaches a runtime that has
// polled /next at least once. On error nothing is left running.
//
// It needs root and unshare(1); without them it returns an error wrapping
// ErrUnsupported.
func Start(ctx context.Context, opts Options) (*Emulator, error) {
	if opts.Bootstrap == "" {
		return nil, fmt.Errorf("%w: no Bootstrap", ErrOptions)
	}
	unshare, err := lookUnshare()
	if err != nil {
		return nil, err
	}
	emulator := opts.Emulator
	if emulator == "" {
		if emulator, err = Binary(); err != nil {
			return nil, err
		}
	}
	if hidden, err := underVar(emulator); err != nil || hidden {
		return nil, fmt.Errorf("%w: emulator %s lies under /var, which the private tmpfs hides", ErrOptions, emulator)
	}
	if !isExecutable(emulator) {
		return nil, fmt.Errorf("%w: emulator %s is not an executable file", ErrOptions, emulator)
	}
	wrapper, err := execWrapper(opts.Exec)
	if err != nil {
		return nil, err
	}
	boot, err := os.Open(opts.Bootstrap)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	defer boot.Close()
	if fi, err := boot.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: bootstrap %s is not a regular file", ErrOptions, opts.Bootstrap)
	}

	limit := opts.StartTimeout
	if limit <= 0 {
		limit = defaultStartLimit
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	for attempt := 1; ; attempt++ {
		// The copy is read through fd 3 at each attempt.
		if _, err := boot.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		e, err := start(ctx, unshare, emulator, wrapper, boot, opts)
		if errors.Is(err, errPortTaken) && attempt < startAttempts {
			continue
		}
		return e, err
	}
}

// Supported reports, cheaply, whether Start can work here: it returns an
// error wrapping ErrUnsupported when the process is not root or unshare(1)
// is not on PATH. Tests call it before building a bootstrap. Start may
// still fail with ErrUnsupported when namespaces are not permitted.
func Supported() error {
	_, err := lookUnshare()
	return err
}

func lookUnshare() (string, error) {
	if err := supported(); err != nil {
		return "", err
	}
	p, err := exec.LookPath("unshare")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return p, nil
}

func start(ctx context.Context, unshare, emulator, wrapper string, boot *os.File, opts Options) (*Emulator, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	rieAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	apiAddr := "127.0.0.1:" + strconv.Itoa(ports[1])

	cmd := exec.Command(unshare,
		"--mount", "--propagation", "private",
		"--pid", "--fork", "--kill-child", "--mount-proc",
		"/bin/sh", "-c", setupScript, "lmigo-rie",
		wrapper, emulator,
		"--runtime-interface-emulator-address", rieAddr,
		"--runtime-api-address", apiAddr,
	)
	cmd.Env = emulatorEnv(opts)
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{boot}
	cmd.SysProcAttr = sysProcAttr()
	logs := &logBuffer{limit: defaultLogLimit}
	cmd.Stdout = stream{logs: logs, tee: opts.Stdout}
	cmd.Stderr = stream{logs: logs, tee: opts.Stderr}
	// The runtime dies with the namespace, but should anything keep the
	// pipes open, Wait must not hang on them.
	cmd.WaitDelay = 2 * time.Second

	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	e := &Emulator{
		cmd:        cmd,
		invokeURL:  "http://" + rieAddr + invokePath,
		rieAddr:    rieAddr,
		runtimeAPI: apiAddr,
		transport:  tr,
		client:     &http.Client{Transport: tr},
		logs:       logs,
		exited:     make(chan struct{}),
		stopped:    make(chan struct{}),
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start unshare: %w", ErrUnsupported, err)
	}
	e.pgid = cmd.Process.Pid
	go func() {
		e.waitErr = cmd.Wait()
		close(e.exited)
	}()

	if err := e.waitReady(ctx); err != nil {
		e.kill()
		e.release()
		return nil, err
	}
	return e, nil
}

// execWrapper returns the text of /var/runtime/bootstrap for the command
// cmd (or the words of $LMIGO_RIE_EXEC when cmd is nil), or "" for none.
func execWrapper(cmd []string) (string, error) {
	if cmd == nil {
		cmd = strings.Fields(os.Getenv(ExecEnv))
	}
	if len(cmd) == 0 {
		return "", nil
	}
	words := slices.Clone(cmd)
	p, err := exec.LookPath(words[0])
	if err == nil {
		p, err = filepath.Abs(p)
	}
	if err != nil {
		return "", fmt.Errorf("%w: Exec: %w", ErrOptions, err)
	}
	if hidden, err := underVar(p); err != nil || hidden {
		return "", fmt.Errorf("%w: Exec %s lies under /var, which the private tmpfs hides", ErrOptions, p)
	}
	words[0] = p
	var b strings.Builder
	b.WriteString("#!/bin/sh\nexec")
	for _, w := range words {
		if strings.ContainsAny(w, "'\x00\n") {
			return "", fmt.Errorf("%w: Exec word %q holds a quote, NUL or newline", ErrOptions, w)
		}
		b.WriteString(" '" + w + "'")
	}
	b.WriteString(" /var/task/bootstrap \"$@\"\n")
	return b.String(), nil
}

// emulatorEnv builds the emulator's whole environment: a PATH for the
// setup script, LMI mode, the timeout, then the caller's pairs.
func emulatorEnv(opts Options) []string {
	n := max(opts.MaxConcurrency, 1)
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"AWS_LAMBDA_MAX_CONCURRENCY=" + strconv.Itoa(n),
	}
	if opts.Timeout > 0 {
		secs := (opts.Timeout + time.Second - 1) / time.Second
		env = append(env, "AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(int(secs)))
	}
	env = append(env, opts.Env...)
	return dedupEnv(env)
}

// dedupEnv keeps the last pair of each name, in first-seen order.
func dedupEnv(env []string) []string {
	idx := make(map[string]int, len(env))
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("rie: pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitReady polls until the invoke endpoint answers a probe that waits for
// the runtime's init (see probe), the emulator exits, or ctx ends.
func (e *Emulator) waitReady(ctx context.Context) error {
	backoff := 5 * time.Millisecond
	for {
		select {
		case <-e.exited:
			return e.earlyExit()
		case <-ctx.Done():
			return fmt.Errorf("%w: %w\n%s", ErrNotReady, ctx.Err(), e.logs.tail(4096))
		default:
		}
		if e.listening(ctx) {
			ready, err := e.probe(ctx)
			if err != nil {
				return err
			}
			if ready {
				return e.pinNamespace()
			}
		}
		select {
		case <-e.exited:
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}

func (e *Emulator) listening(ctx context.Context) bool {
	d := net.Dialer{Timeout: 200 * time.Millisecond}
	c, err := d.DialContext(ctx, "tcp", e.rieAddr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// probe sends an invoke whose X-Amz-Client-Context is not base64. The
// emulator runs (or waits for) the runtime's init before it looks at the
// request, then rejects it with 400 "ErrMalformedRequest" without touching
// the runtime; a failed init is answered with the init error instead.
// A transport error means "not yet" (ready false, err nil).
func (e *Emulator) probe(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.invokeURL, strings.NewReader("{}"))
	if err != nil {
		return false, err
	}
	req.Header.Set("X-Amz-Client-Context", "!")
	resp, err := e.client.Do(req)
	if err != nil {
		return false, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	et := resp.Header.Get(ErrorTypeHeader)
	if resp.StatusCode == http.StatusBadRequest && et == probeErrorType {
		return true, nil
	}
	// The emulator exits after a failed init: its output, the runtime's
	// lines about the failure included, is all copied once it has.
	select {
	case <-e.exited:
	case <-ctx.Done():
	}
	return false, fmt.Errorf("%w: status %d, %s: %s\n%s", ErrInit, resp.StatusCode, et, body, e.logs.tail(4096))
}

const probeErrorType = "ErrMalformedRequest"

// earlyExit explains why the emulator exited before it was ready.
func (e *Emulator) earlyExit() error {
	out := e.logs.Bytes()
	code := -1
	if e.cmd.ProcessState != nil {
		code = e.cmd.ProcessState.ExitCode()
	}
	tail := e.logs.tail(4096)
	switch {
	case strings.Contains(string(out), "address already in use"):
		return errPortTaken
	case strings.Contains(string(out), "INIT failed"):
		// The emulator inits the runtime as soon as it starts and exits
		// when that fails, before any invoke could report the error.
		return fmt.Errorf("%w: emulator exited (%s)\n%s", ErrInit, e.exitStatus(), tail)
	case code == setupExit, strings.Contains(string(out), "unshare: "), strings.Contains(string(out), "mount: "):
		return fmt.Errorf("%w: cannot create private namespaces (exit %d)\n%s", ErrUnsupported, code, tail)
	default:
		return fmt.Errorf("%w: emulator exited (%s)\n%s", ErrNotReady, e.exitStatus(), tail)
	}
}

// exitStatus describes how unshare, and so the emulator, ended; call it
// only after exited is closed.
func (e *Emulator) exitStatus() string {
	if e.cmd.ProcessState == nil {
		return fmt.Sprint(e.waitErr)
	}
	return e.cmd.ProcessState.String()
}

// pinNamespace records the emulator's PID namespace and holds it open, so
// that Processes never mistakes a later namespace with a reused inode
// number for this one.
func (e *Emulator) pinNamespace() error {
	child, ok := childOf(e.cmd.Process.Pid)
	if !ok {
		return fmt.Errorf("%w: emulator process not found under unshare %d", ErrNotReady, e.cmd.Process.Pid)
	}
	path := "/proc/" + strconv.Itoa(child) + "/ns/pid"
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotReady, err)
	}
	ns, err := os.Readlink(path)
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("%w: %w", ErrNotReady, err)
	}
	e.nsFile, e.ns = f, ns
	return nil
}

// URL is the invoke endpoint, http://127.0.0.1:PORT/2015-03-31/functions/function/invocations.
func (e *Emulator) URL() string { return e.invokeURL }

// RuntimeAPI is the host:port the runtime finds in AWS_LAMBDA_RUNTIME_API.
func (e *Emulator) RuntimeAPI() string { return e.runtimeAPI }

// Logs returns the captured output of the emulator and the runtime (the
// emulator relays the runtime's stdout and stderr into its own stdout),
// stdout and stderr interleaved as they arrived, at most the last few MiB.
func (e *Emulator) Logs() []byte { return e.logs.Bytes() }

// Done is closed when the emulator has exited, for whatever reason.
func (e *Emulator) Done() <-chan struct{} { return e.exited }

// Processes lists the live processes of the emulator's PID namespace: the
// emulator itself (PID 1 inside) and the runtime (uid 993) with anything
// it started. It is empty once the emulator has exited.
func (e *Emulator) Processes() []Process {
	select {
	case <-e.exited:
		return nil
	default:
	}
	return nsProcesses(e.ns)
}

// Stop sends SIGTERM to the emulator, which shuts the runtime down, and
// waits for it; after 20 s it kills the process group instead. The
// kernel then kills whatever is left in the namespace, and Stop checks
// that nothing of it is still alive. It is safe to call more than once
// and returns the same result each time. A non-nil result wraps ErrExited
// (the emulator had already gone), ErrKilled or ErrLeftover.
func (e *Emulator) Stop() error {
	e.stopOnce.Do(func() {
		close(e.stopped)
		e.stopErr = e.stop()
	})
	return e.stopErr
}

func (e *Emulator) stop() error {
	var errs []error
	before := e.Processes()
	select {
	case <-e.exited:
		errs = append(errs, fmt.Errorf("%w before Stop (%s)", ErrExited, e.exitStatus()))
	default:
		// unshare blocks SIGTERM while it waits; the emulator, PID 1 of its
		// namespace, handles it.
		_ = killGroup(e.pgid, syscall.SIGTERM)
		select {
		case <-e.exited:
		case <-time.After(stopGrace):
			errs = append(errs, ErrKilled)
			e.kill()
		}
	}
	e.release()
	var left []Process
	for _, p := range before {
		if p.alive() {
			left = append(left, p)
			_ = killPID(p.PID, syscall.SIGKILL)
		}
	}
	if len(left) > 0 {
		errs = append(errs, fmt.Errorf("%w: %s", ErrLeftover, describe(left)))
	}
	return errors.Join(errs...)
}

// kill ends unshare and the emulator at once; --kill-child and the PID
// namespace take the runtime with them. It returns once unshare is reaped
// (bounded by WaitDelay).
func (e *Emulator) kill() {
	_ = killGroup(e.pgid, syscall.SIGKILL)
	<-e.exited
}

// release drops what the Emulator holds in this process.
func (e *Emulator) release() {
	e.transport.CloseIdleConnections()
	if e.nsFile != nil {
		_ = e.nsFile.Close()
	}
}
