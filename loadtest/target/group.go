package target

import (
	"fmt"
	"syscall"
	"time"

	"github.com/lmigo/lmigo/loadtest/measure"
)

// A bootstrap may be a wrapper script whose children do the work, or
// start helpers of their own. The load test starts each bootstrap as the
// leader of a process group of its own and ends the whole group, so that
// nothing it started outlives it. A process that leaves the group
// (setsid) leaves the load test's reach as well.

// groupAttr makes a started command the leader of a new process group.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// groupEnd bounds how long endGroup waits for the group to go.
const groupEnd = 2 * time.Second

// endGroup ends process group pgid: SIGTERM to every process of it,
// then SIGKILL to those left after grace. It returns once no process of
// the group is alive, or with an error naming those left.
func endGroup(pgid int, grace time.Duration) error {
	if pgid <= 0 || len(measure.GroupMembers(pgid)) == 0 {
		return nil
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if groupGone(pgid, grace) {
		return nil
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if groupGone(pgid, groupEnd) {
		return nil
	}
	return fmt.Errorf("processes %v of the bootstrap's group survived SIGKILL", measure.GroupMembers(pgid))
}

// groupGone waits up to d for the last process of group pgid to end.
func groupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if len(measure.GroupMembers(pgid)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
