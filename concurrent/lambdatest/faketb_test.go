package lambdatest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTB records the failures of what it is given, so that a test can
// check that lambdatest fails a test, and how. Cleanups run at the end of
// run, as testing runs them at the end of a test.
type fakeTB struct {
	testing.TB // the real test, for what fakeTB does not record
	mu         sync.Mutex
	errs       []string
	logs       []string
	fatal      bool
	skipped    bool
	errored    chan struct{} // closed, and replaced, at each failure
	cleanups   []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
	if f.errored != nil {
		close(f.errored)
	}
	f.errored = make(chan struct{})
}

// waitError waits until a failure contains want, up to the real test's
// deadline.
func (f *fakeTB) waitError(want string) bool {
	ctx := context.Background()
	if d, ok := f.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Until(d)/10))
		defer cancel()
	}
	for {
		f.mu.Lock()
		if f.errored == nil {
			f.errored = make(chan struct{})
		}
		ch, text := f.errored, strings.Join(f.errs, "\n")
		f.mu.Unlock()
		if strings.Contains(text, want) {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.mu.Lock()
	f.fatal = true
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errs) > 0
}

func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) logged() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.logs, "\n")
}

// Skip ends the body as testing's does: a child process of CheckIsolation
// skips the test once it has served.
func (f *fakeTB) Skip(args ...any) {
	f.mu.Lock()
	f.skipped = true
	f.mu.Unlock()
	runtime.Goexit()
}

// Deadline is the real test's: CheckIsolation bounds its children by it.
func (f *fakeTB) Deadline() (time.Time, bool) {
	if d, ok := f.TB.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// run runs fn as a test body on its own goroutine (Fatalf ends it), then
// the cleanups, last first.
func (f *fakeTB) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			for i := len(f.cleanups) - 1; i >= 0; i-- {
				f.cleanups[i]()
			}
		}()
		fn()
	}()
	<-done
}

func (f *fakeTB) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errs, "\n")
}
