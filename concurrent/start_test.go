package concurrent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// helperEnv selects the helper main in a re-executed test binary.
const helperEnv = "LMIGO_TEST_START_HELPER"

// TestStartHelper is not a test of its own: re-executed by
// TestStartShutsDownOnSignal with helperEnv set, it is a bootstrap's main,
// and Start ends the process.
func TestStartHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("runs only as the helper process of TestStartShutsDownOnSignal")
	}
	Start(func(ctx context.Context, ev struct{ SleepMS int }) (string, error) {
		fmt.Println("handler started")
		time.Sleep(time.Duration(ev.SleepMS) * time.Millisecond)
		return "finished", nil
	})
}

// startChild starts cmd, this test binary re-executed, with its stdout
// piped and its stderr kept; the test is skipped where the binary cannot
// run directly (built for another architecture, without rie.ExecEnv).
func startChild(t *testing.T, cmd *exec.Cmd) (stdout io.ReadCloser, stderr *syncBuffer) {
	t.Helper()
	stderr = new(syncBuffer)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); errors.Is(err, syscall.ENOEXEC) {
		t.Skipf("cannot run this test binary directly (set %s): %v", rie.ExecEnv, err)
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout, stderr
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStartShutsDownOnSignal runs Start in a process of its own (this test
// binary, re-executed) against the fake Runtime API with LMIGO_SIGTERM=1,
// sends it SIGTERM or SIGINT while an invocation is in flight, and checks
// that the process answers that invocation if it ends within
// LMIGO_SHUTDOWN_TIMEOUT, exits 0 within Lambda's ~600 ms, and says so in
// its last log line.
func TestStartShutsDownOnSignal(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("in the helper process")
	}
	tests := []struct {
		name     string
		sig      syscall.Signal
		sleepMS  int
		answered bool
		cause    string
	}{
		{"SIGTERM", syscall.SIGTERM, 200, true, "terminated signal received"},
		{"SIGINT", syscall.SIGINT, 200, true, "interrupt signal received"},
		{"SIGTERM with a handler over budget", syscall.SIGTERM, 5000, false, "terminated signal received"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
			args := []string{os.Args[0], "-test.run=^TestStartHelper$", "-test.count=1"}
			// Built for another architecture (make test-arm64), the binary
			// runs through the same wrapper as the emulator's bootstrap.
			wrapper := strings.Fields(os.Getenv(rie.ExecEnv))
			args = append(wrapper, args...)
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), helperEnv+"=1",
				"AWS_LAMBDA_RUNTIME_API="+api.Addr(), "AWS_LAMBDA_MAX_CONCURRENCY=2",
				"AWS_LAMBDA_LOG_FORMAT=JSON", "LMIGO_SIGTERM=1", "LMIGO_SHUTDOWN_TIMEOUT=500ms",
				// The race detector otherwise sleeps 1 s at exit.
				"GORACE=atexit_sleep_ms=0")
			stdout, stderr := startChild(t, cmd)
			exited := make(chan error, 1)
			started := make(chan struct{}, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if sc.Text() == "handler started" {
						started <- struct{}{}
					}
				}
				exited <- cmd.Wait()
			}()
			t.Cleanup(func() { _ = cmd.Process.Kill() })

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := api.WaitPolls(ctx, 2); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if st := api.Stats(); st.Extensions != 1 {
				t.Fatalf("extension not registered before the first /next: %+v", st)
			}
			res := make(chan rapitest.Result, 1)
			go func() {
				r, _ := api.Invoke(ctx, rapitest.Request{Payload: fmt.Appendf(nil, `{"SleepMS":%d}`, tt.sleepMS), Timeout: 10 * time.Second})
				res <- r
			}()
			select {
			case <-started:
			case <-ctx.Done():
				t.Fatalf("handler never started\n%s", stderr.String())
			}
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			var waitErr error
			select {
			case waitErr = <-exited:
			case <-time.After(10 * time.Second):
				t.Fatalf("no exit after %v\n%s", tt.sig, stderr.String())
			}
			took := time.Since(sent)
			t.Logf("%v %v after %v", cmd.ProcessState, took.Round(time.Millisecond), tt.sig)
			if waitErr != nil {
				t.Fatalf("exit: %v, want status 0\n%s", waitErr, stderr.String())
			}
			// Lambda sends SIGKILL about 600 ms after SIGTERM; the budget is
			// LMIGO_SHUTDOWN_TIMEOUT (500 ms). Allow for a loaded machine,
			// and more for an emulated CPU.
			limit := time.Second
			if len(wrapper) > 0 {
				limit = 3 * time.Second
			}
			if took > limit {
				t.Errorf("exited %v after the signal", took)
			}
			if !tt.answered && took < 450*time.Millisecond {
				t.Errorf("exited %v after the signal: the shutdown budget was not given", took)
			}

			var last struct {
				Level, Message, Cause string
				InFlightLeft          int
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
				t.Fatalf("last log line %q: %v", lines[len(lines)-1], err)
			}
			wantLeft := 0
			if !tt.answered {
				wantLeft = 1
			}
			if last.Message != "runtime stopped" || last.Cause != tt.cause || last.InFlightLeft != wantLeft {
				t.Fatalf("last log line %+v", last)
			}

			if tt.answered {
				if r := <-res; r.Err != nil || string(r.Body) != `"finished"` {
					t.Fatalf("in-flight invocation: %s %+v", r.Body, r.Err)
				}
				if st := api.Stats(); st.Responses != 1 {
					t.Fatalf("stats %+v", st)
				}
				return
			}
			// Over budget: abandoned at exit (Lambda has already failed it).
			cancel()
			if r := <-res; r.Err != nil || r.Body != nil {
				t.Fatalf("abandoned invocation answered: %s %+v", r.Body, r.Err)
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatal("test deadline")
			}
		})
	}
}
