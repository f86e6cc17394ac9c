package rapi

import "syscall"

// setLowat sets the receive low-water mark of the connection to n bytes
// (0: back to the default, 1), with no allocation: the raw connection is
// kept per connection, and the function given to Control once per Conn.
func (c *Conn) setLowat(n int) {
	if n <= 1 {
		if !c.lowatOn {
			return
		}
		n = 1
	}
	if c.rawFor != c.nc {
		c.raw, c.rawFor = nil, c.nc
		if sc, ok := c.nc.(syscall.Conn); ok {
			c.raw, _ = sc.SyscallConn()
		}
	}
	if c.raw == nil {
		return
	}
	if c.lowatFn == nil {
		c.lowatFn = func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, c.lowatArg)
		}
	}
	c.lowatArg = n
	if c.raw.Control(c.lowatFn) == nil {
		c.lowatOn = n > 1
	}
}
