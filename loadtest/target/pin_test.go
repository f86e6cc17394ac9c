package target

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// cpusOfThreads returns the Cpus_allowed_list of every thread.
func cpusOfThreads(t *testing.T) map[string]int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(dirs) == 0 {
		t.Skip("no /proc/self/task")
	}
	seen := map[string]int{}
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				seen[strings.TrimSpace(v)]++
			}
		}
	}
	return seen
}

func TestPinSelf(t *testing.T) {
	before := cpusOfThreads(t)
	restore, err := PinSelf(0)
	if err != nil {
		t.Fatal(err)
	}
	pinned := cpusOfThreads(t)
	procs := runtime.GOMAXPROCS(0)
	restore()
	if len(pinned) != 1 || pinned["0"] == 0 {
		t.Errorf("pinned threads' CPUs: %v, want all on 0", pinned)
	}
	if procs != 1 {
		t.Errorf("GOMAXPROCS %d while pinned, want 1", procs)
	}
	after := cpusOfThreads(t)
	if _, ok := after["0"]; ok && runtime.NumCPU() > 1 {
		t.Errorf("affinity not restored: %v (before %v)", after, before)
	}
	if _, err := PinSelf(runtime.NumCPU() + 64); err == nil {
		t.Error("pinning to a CPU that does not exist succeeded")
	}
}
