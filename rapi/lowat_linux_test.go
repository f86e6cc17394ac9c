package rapi

import (
	"syscall"
	"testing"
)

// rcvlowat reads SO_RCVLOWAT of cn's connection.
func rcvlowat(t *testing.T, cn *Conn) int {
	t.Helper()
	rc, err := cn.nc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return v
}
