package target

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinSelf restricts every thread of this process to cpu, and GOMAXPROCS to
// 1, and returns the function that undoes both. Threads started later
// inherit the mask of the thread that starts them, so once every existing
// thread is pinned the process stays pinned; the loop repeats until a pass
// finds no thread it has not pinned yet. A bootstrap exec'd meanwhile
// inherits the mask too.
//
// Pinning the load test with the bootstrap is what makes N=1 figures
// stable on a small machine: unpinned, every invocation is a cross-CPU
// wake-up or not, by chance, and the results are bimodal.
func PinSelf(cpu int) (restore func(), err error) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	if !old.IsSet(cpu) {
		return nil, fmt.Errorf("CPU %d is not available to this process", cpu)
	}
	var set unix.CPUSet
	set.Zero()
	set.Set(cpu)
	if err := setAllThreads(&set); err != nil {
		_ = setAllThreads(&old)
		return nil, err
	}
	runtime.GOMAXPROCS(1)
	return func() {
		_ = setAllThreads(&old)
		runtime.SetDefaultGOMAXPROCS()
	}, nil
}

func setAllThreads(set *unix.CPUSet) error {
	done := map[int]bool{}
	for range 100 {
		tids, err := threads()
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			// A thread may end between the listing and the call.
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("sched_setaffinity %d: %w", tid, err)
			}
			done[tid] = true
		}
		if fresh == 0 {
			return nil
		}
	}
	return fmt.Errorf("threads keep appearing; could not set the affinity of all")
}

func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
