package target_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lmigo/lmigo/loadtest/internal/fntest"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
)

// TestGroupMeasured: a user's function behind a wrapper is measured as
// its group: the wrapper and its child, their memory summed, their CPU
// together.
func TestGroupMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	dir := fntest.OpenDir(t)
	fn, _ := fntest.Shape(t)
	script, mark := fntest.Wrapper(t, dir, "SLEEP &\n\""+fn+"\" &\nwait")
	opts := target.Options{Target: target.Fake, MemoryMB: 2048, Timeout: 30 * time.Second}
	in, err := target.Start(t.Context(), opts, target.Runtime{Name: target.Function, Binary: script}, 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := in.Stop(); err != nil {
			t.Error(err)
		}
		if left := fntest.Leftovers(fn, mark); len(left) > 0 {
			t.Errorf("processes left running:\n%s", strings.Join(left, "\n"))
			fntest.KillAll(left)
		}
	}()
	pids := in.Procs()
	if !slices.Contains(pids, in.PID) || len(pids) != 3 {
		t.Fatalf("measured %v, want the wrapper %d, its sleep and the function", pids, in.PID)
	}
	var child int
	for _, pid := range pids {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == fn {
			child = pid
		}
	}
	own, err := measure.ReadCPU(child)
	if err != nil {
		t.Fatal(err)
	}
	group, err := in.CPU()
	if err != nil || group < own.Total() {
		t.Errorf("group CPU %v (%v), less than the function's own %v", group, err, own.Total())
	}
	var sum int64
	for _, pid := range pids {
		st, err := measure.ReadStatus(pid)
		if err != nil {
			t.Fatal(err)
		}
		sum += st.RSS
	}
	st, err := in.Status()
	// RSS moves between the reads; the function's own is the most of it.
	fnSt, _ := measure.ReadStatus(child)
	if err != nil || st.RSS < fnSt.RSS || st.Peak < fnSt.Peak {
		t.Errorf("group memory %+v (%v), less than the function's own %+v (the members' sum was %d)", st, err, fnSt, sum)
	}
}
