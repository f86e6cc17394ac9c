package rie

import (
	"fmt"
	"io"
	"sync"
)

// defaultLogLimit bounds the captured output: a long load run writes three
// lines per invoke, and only the recent past helps a failure message.
const defaultLogLimit = 4 << 20

// logBuffer keeps the most recent output of the emulator, up to limit
// bytes, and copies each write to an optional writer per stream.
type logBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

// stream is one of the emulator's output pipes feeding the shared buffer.
type stream struct {
	logs *logBuffer
	tee  io.Writer
}

func (s stream) Write(p []byte) (int, error) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	s.logs.appendLocked(p)
	if s.tee != nil {
		// A failing tee must not stall the emulator's pipe: its error is
		// dropped and the capture goes on.
		_, _ = s.tee.Write(p)
	}
	return len(p), nil
}

func (l *logBuffer) appendLocked(p []byte) {
	l.buf = append(l.buf, p...)
	if len(l.buf) <= l.limit {
		return
	}
	// Drop the oldest quarter at once rather than a little per write.
	cut := len(l.buf) - l.limit*3/4
	l.dropped += int64(cut)
	l.buf = append(l.buf[:0], l.buf[cut:]...)
}

// Bytes returns a copy of what is kept, led by a note when older output
// was dropped.
func (l *logBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	if l.dropped > 0 {
		out = fmt.Appendf(out, "[rie: %d earlier bytes dropped]\n", l.dropped)
	}
	return append(out, l.buf...)
}

// tail returns at most n of the last bytes kept, for error messages.
func (l *logBuffer) tail(n int) []byte {
	b := l.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return b
}
