//go:build linux

package rie

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// sysProcAttr puts unshare in its own process group, so that Stop can
// signal it and the emulator together without touching the test process,
// and has the kernel kill it if the thread that started it dies, which in
// turn kills the emulator (--kill-child) and so the whole namespace.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func supported() error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("%w: running as uid %d, not root", ErrUnsupported, uid)
	}
	return nil
}

func statUID(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// killGroup signals every process of process group pgid.
func killGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// killPID signals one process.
func killPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
