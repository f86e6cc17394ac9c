//go:build !linux

package rapi

// setLowat does nothing off Linux: the answer then wakes the process as
// before, and is still read by Next.
func (c *Conn) setLowat(int) {}
