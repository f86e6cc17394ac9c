package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/show"
)

// A user's function speaks in its output: its own log lines and lmigo's
// WARN lines say what went wrong before any figure does. The load test
// keeps all of it in a file beside its report and sums up its WARN and
// ERROR lines in the report.

// Output takes a function's stdout and stderr: it writes them to its
// file and counts their WARN and ERROR lines. In the emulator, whose
// output holds the function's lines and its own, its own lines go to a
// file of their own. It is safe for concurrent use; the zero value
// counts without a file.
type Output struct {
	mu  sync.Mutex
	fn  bounded // the function's lines
	emu bounded // the emulator's own lines (rie)
	// rie: the emulator's own lines share the output; lines arrive whole
	// (target.lines), one stream at a time.
	rie     bool
	partial []byte // the start of a line not yet ended, at most maxLevelLine
	counts  OutputCounts
}

// maxOutputFile bounds the file: a function that logs without end must
// not fill the disk.
const maxOutputFile = 256 << 20

// OutputCounts sums up a function's output, for the report.
type OutputCounts struct {
	Warn       int64  `json:"warnLines"`
	Error      int64  `json:"errorLines"` // ERROR and worse (FATAL, PANIC)
	FirstWarn  string `json:"firstWarn,omitempty"`
	FirstError string `json:"firstError,omitempty"`
	File       string `json:"file,omitempty"`
	// Emulator counts the emulator's own lines, kept in EmulatorFile.
	Emulator     int64  `json:"emulatorLines,omitempty"`
	EmulatorFile string `json:"emulatorFile,omitempty"`
}

// maxLevelLine is how much of a line is read for its level.
const maxLevelLine = 64 << 10

// CreateOutput opens the file name in dir for a function's output; with
// dir "" it only counts. The emulator's own lines, if any, go to name
// with "function" made "emulator".
func CreateOutput(dir, name string) (*Output, error) {
	if dir == "" {
		return &Output{}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	f, err := os.Create(p)
	if err != nil {
		return nil, err
	}
	emu := filepath.Join(filepath.Dir(p), "emulator-"+name)
	if strings.Contains(name, "function") {
		emu = filepath.Join(filepath.Dir(p), strings.Replace(name, "function", "emulator", 1))
	}
	return &Output{fn: bounded{file: f, path: p}, emu: bounded{path: emu}}, nil
}

// Write keeps p and counts the lines it ends. It never fails: a file
// that cannot be written is said at close.
func (o *Output) Write(p []byte) (int, error) {
	n := len(p)
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.rie {
		o.fn.write(p)
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			o.partial = append(o.partial, p[:min(len(p), maxLevelLine-len(o.partial))]...)
			break
		}
		o.partial = append(o.partial, p[:min(i, maxLevelLine-len(o.partial))]...)
		o.line(o.partial)
		o.partial, p = o.partial[:0], p[i+1:]
	}
	return n, nil
}

// line counts a line and, in the emulator, keeps it in the file it
// belongs to: the emulator's own part in its file, the function's in
// the function's. A line longer than maxLevelLine keeps its start only.
func (o *Output) line(l []byte) {
	if !o.rie {
		o.count(l)
		return
	}
	own := functionPart(string(l))
	if len(own) < len(bytes.TrimSpace(l)) {
		o.counts.Emulator++
		o.emu.write(append(bytes.TrimPrefix(bytes.TrimSpace(l), []byte(own)), '\n'))
	}
	if own != "" {
		o.fn.write([]byte(own + "\n"))
		o.count([]byte(own))
	}
}

// Emulator is a writer for the emulator's own output, kept in its file
// and counted apart from the function's.
func (o *Output) Emulator() io.Writer { return emulatorWriter{o} }

type emulatorWriter struct{ o *Output }

func (w emulatorWriter) Write(p []byte) (int, error) {
	w.o.mu.Lock()
	defer w.o.mu.Unlock()
	w.o.emu.write(p)
	w.o.counts.Emulator += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// Note writes a line of the load test's own into the file: where a
// fresh process begins.
func (o *Output) Note(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fn.write(fmt.Appendf(nil, "=== loadtest: "+format+"\n", args...))
}

func (o *Output) count(line []byte) {
	if measure.IsGCLine(line) {
		return
	}
	switch lineLevel(line) {
	case "WARN":
		o.counts.Warn++
		if o.counts.FirstWarn == "" {
			o.counts.FirstWarn = show.Abbreviate(line, 200)
		}
	case "ERROR":
		o.counts.Error++
		if o.counts.FirstError == "" {
			o.counts.FirstError = show.Abbreviate(line, 200)
		}
	}
}

// Summary is what the output held so far.
func (o *Output) Summary() OutputCounts {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.counts
	c.File = o.fn.path
	if c.Emulator > 0 {
		c.EmulatorFile = o.emu.path
	}
	return c
}

// Close counts a last line without its newline and closes the files.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.partial) > 0 {
		o.line(o.partial)
		o.partial = nil
	}
	err := errors.Join(o.fn.close(), o.emu.close())
	if err != nil {
		return fmt.Errorf("the function's output: %w", err)
	}
	return nil
}

// bounded is a file of at most maxOutputFile bytes, created at its first
// write when it has a path but no file yet.
type bounded struct {
	file    *os.File
	path    string // absolute; "" without a file
	written int64
	err     error // the first error creating or writing it
	closed  bool
}

func (b *bounded) write(p []byte) {
	if b.path == "" || b.closed || b.err != nil || b.written >= maxOutputFile {
		return
	}
	if b.file == nil {
		if b.file, b.err = os.Create(b.path); b.err != nil {
			return
		}
	}
	keep := p[:min(int64(len(p)), maxOutputFile-b.written)]
	_, b.err = b.file.Write(keep)
	b.written += int64(len(keep))
	if b.written == maxOutputFile {
		_, b.err = fmt.Fprintf(b.file, "\n=== loadtest: the rest of the output is left out (more than %d MiB)\n", maxOutputFile>>20)
	}
}

func (b *bounded) close() error {
	b.closed = true
	if b.file == nil {
		return b.err
	}
	err := b.file.Close()
	b.file = nil
	return errors.Join(b.err, err)
}

// Words says what the output held, in a line of the report.
func (c OutputCounts) Words() string {
	s := fmt.Sprintf("%d WARN and %d ERROR line(s)", c.Warn, c.Error)
	if c.FirstWarn != "" {
		s += "; first WARN: " + c.FirstWarn
	}
	if c.FirstError != "" {
		s += "; first ERROR: " + c.FirstError
	}
	if c.File != "" {
		s += "; all of it in " + c.File
	}
	if c.Emulator > 0 {
		s += fmt.Sprintf("; the emulator's own %d line(s) (START, END, REPORT and its logger's time=… level=… msg=… lines) apart in %s and not counted: a function that logs in that same shape has those lines there too", c.Emulator, c.EmulatorFile)
	}
	return s
}

// lineLevel is the level of a log line, WARN, ERROR (FATAL and PANIC
// with it) or "": a JSON line's top-level "level", a logfmt line's
// level=, or a word of the text's first few.
func lineLevel(line []byte) string {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '{' {
		return levelWord(jsonLevel(line))
	}
	f := strings.Fields(string(line[:min(len(line), 200)]))
	for i, w := range f {
		if v, ok := strings.CutPrefix(w, "level="); ok {
			return levelWord(strings.Trim(v, `"`))
		}
		if i < 6 {
			if l := levelWord(strings.Trim(w, "[]:")); l != "" && strings.ToUpper(w) == w {
				return l
			}
		}
	}
	return ""
}

// levelWord maps the names loggers give levels to WARN and ERROR.
func levelWord(w string) string {
	switch strings.ToUpper(w) {
	case "WARN", "WARNING":
		return "WARN"
	case "ERROR", "ERR", "FATAL", "PANIC", "DPANIC", "CRITICAL":
		return "ERROR"
	}
	return ""
}

// jsonLevel is the string of a JSON object's top-level "level" member.
func jsonLevel(line []byte) string {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return ""
		}
		if key == "level" {
			var s string
			_ = json.Unmarshal(v, &s)
			return s
		}
	}
	return ""
}
