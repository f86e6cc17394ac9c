package rapi

import "syscall"

// setLowat sets the receive low-water mark of the connection to n bytes
// (0: back to the default, 1). It allocates nothing: the raw connection is
// kept per connection, and the function given to Control once per Conn.
func (c *Conn) setLowat(n int) {
	if n <= 1 {
		if !c.pipe.lowatOn {
			return
		}
		n = 1
	}
	if c.pipe.rawFor != c.nc {
		c.pipe.raw, c.pipe.rawFor = nil, c.nc
		if sc, ok := c.nc.(syscall.Conn); ok {
			c.pipe.raw, _ = sc.SyscallConn()
		}
	}
	if c.pipe.raw == nil {
		return
	}
	if c.pipe.lowatFn == nil {
		c.pipe.lowatFn = func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, c.pipe.lowatArg)
		}
	}
	c.pipe.lowatArg = n
	if c.pipe.raw.Control(c.pipe.lowatFn) == nil {
		c.pipe.lowatOn = n > 1
	}
}
