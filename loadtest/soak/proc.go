package soak

import (
	"bytes"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// The processes of both phases: their SIGTERM, their output, the wait
// for what they say.

// soakShutdown is the bootstraps' shutdown budget (LMIGO_SHUTDOWN_TIMEOUT).
// The soak judges exactly once, not the platform's budget: with its default
// (500 ms), a machine busy enough could keep the handlers of the SIGTERM
// tail from finishing in time, and their invocations would be lost for the
// machine's speed alone.
const soakShutdown = 5 * time.Second

// soakExitWait bounds how long the soak waits for the process after SIGTERM:
// the shutdown budget, and room beyond it for a busy machine.
const soakExitWait = 3 * soakShutdown

// sigterm sends cmd SIGTERM and waits up to soakExitWait for exited (closed
// once cmd.Wait returned): how long it took, its exit status, and whether it
// exited in time.
func sigterm(cmd *exec.Cmd, exited <-chan struct{}) (after time.Duration, status int, ok bool) {
	sent := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return time.Since(sent), cmd.ProcessState.ExitCode(), true
	case <-time.After(soakExitWait):
		return 0, 0, false
	}
}

// maxLogLine is the emulator's log line buffer: a longer line stops its
// copy of the runtime's output.
const maxLogLine = 64 << 10

// lineBound keeps the length of the longest line written to it.
type lineBound struct {
	mu       sync.Mutex
	cur, max int
}

func (l *lineBound) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.cur += len(rest)
			break
		}
		l.max = max(l.max, l.cur+i)
		l.cur = 0
		rest = rest[i+1:]
	}
	l.max = max(l.max, l.cur)
	return len(p), nil
}

func (l *lineBound) longest() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// waitUntil polls cond every millisecond for at most d.
func waitUntil(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// tailBuffer keeps the last 8 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 8<<10; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
