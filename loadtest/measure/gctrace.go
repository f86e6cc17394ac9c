package measure

import "sync"

// GCCounter counts the garbage collections a Go process reports on stderr
// when run with GODEBUG=gctrace=1, one line each:
//
//	gc 12 @0.345s 1%: 0.011+0.52+0.002 ms clock, ...
//
// A line counts when, after leading spaces, it starts with "gc", a space,
// a decimal number, a space and '@'. Lines may arrive split across
// writes. It keeps the last TailBytes of everything written, gctrace lines
// included, for error reports. The zero value is ready to use.
type GCCounter struct {
	mu   sync.Mutex
	n    int64
	head []byte // the start of the current line, up to headLen bytes
	tail []byte
}

const (
	headLen = 32
	// TailBytes is how much of the output Tail keeps.
	TailBytes = 16 << 10
)

// Write counts the gctrace lines completed by p. It never fails.
func (c *GCCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range p {
		if b == '\n' {
			if IsGCLine(c.head) {
				c.n++
			}
			c.head = c.head[:0]
			continue
		}
		if len(c.head) < headLen {
			c.head = append(c.head, b)
		}
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*TailBytes {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-TailBytes:]...)
	}
	return len(p), nil
}

// Count is the number of gctrace lines written so far.
func (c *GCCounter) Count() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Tail returns a copy of the last TailBytes (or fewer) bytes written.
func (c *GCCounter) Tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tail
	if len(t) > TailBytes {
		t = t[len(t)-TailBytes:]
	}
	return string(t)
}

// IsGCLine reports whether line (without its newline) is a gctrace line.
func IsGCLine(line []byte) bool {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	line = line[i:]
	if len(line) < 6 || string(line[:3]) != "gc " {
		return false
	}
	j := 3
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	return j > 3 && j+1 < len(line) && line[j] == ' ' && line[j+1] == '@'
}
