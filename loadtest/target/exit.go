package target

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/lmigo/lmigo/loadtest/measure"
)

// A function that exits (log.Fatal or os.Exit on a request path, a
// crash) ends every invocation it serves: Lambda fails them all with
// Runtime.ExitError. The load test stops the load at once and says so
// first, with the function's last words, rather than waiting out the
// timeouts of invocations nobody will answer.

// ExitWatch ends a load's context when the function ends on its own.
type ExitWatch struct {
	in    *Instance
	ended atomic.Bool
}

// WatchExit returns ctx, canceled as well when in's function ends on its
// own before ctx does. The watch ends with ctx.
func WatchExit(ctx context.Context, in *Instance) (context.Context, *ExitWatch) {
	w := &ExitWatch{in: in}
	if in.exited == nil {
		return ctx, w
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		select {
		case <-in.exited:
			w.ended.Store(ctx.Err() == nil)
		case <-ctx.Done():
		}
	}()
	return ctx, w
}

// Exited reports whether the function ended on its own while watched.
func (w *ExitWatch) Exited() bool { return w.ended.Load() }

// ExitProblem says that the function exited, how, and its last words.
func (in *Instance) ExitProblem() string {
	return fmt.Sprintf("the function exited (%s) while invocations were in flight: Lambda ends every one of them with Runtime.ExitError (log.Fatal and os.Exit on a request path do this); its last output:\n%s",
		in.ExitStatus(), in.lastWords())
}

// rieExit is the emulator's line saying how the runtime ended.
var rieExit = regexp.MustCompile(`msg="Process exited" name=runtime event="([^"]*)"`)

// ExitStatus says how the function ended, once in.exited is closed.
func (in *Instance) ExitStatus() string {
	if in.exitState != nil {
		if s := in.exitState(); s != "" {
			return s
		}
	}
	if in.GC == nil {
		return "its status unknown"
	}
	if m := rieExit.FindAllStringSubmatch(in.GC.Tail(), -1); len(m) > 0 {
		return m[len(m)-1][1]
	}
	return "its status unknown"
}

// LastWords says where the runtime's last output is, for error
// messages after "the runtime's" or "the function's": file, the one
// that keeps it, when set; else its own last lines, gctrace lines and
// the emulator's own left out; "" when it has none.
func (in *Instance) LastWords(file string) string {
	if file != "" {
		return "output is in " + file
	}
	if w := in.lastWords(); w != "" {
		return "last output:\n" + w
	}
	return ""
}

// lastWords is the end of the function's own output: gctrace lines and
// the emulator's own lines left out.
func (in *Instance) lastWords() string {
	if in.GC == nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(in.GC.Tail(), "\n"), "\n")
	var own []string
	for _, l := range lines {
		if in.rie {
			l = functionPart(l)
		}
		if l != "" && !measure.IsGCLine([]byte(l)) {
			own = append(own, l)
		}
	}
	own = own[max(0, len(own)-lastLines):]
	out := strings.Join(own, "\n")
	if len(out) > 2048 {
		out = "..." + out[len(out)-2048:]
	}
	return out
}

// lastLines is how many lines of the function's output lastWords keeps.
const lastLines = 10

// emulatorLine finds the emulator's own lines in its output: its
// logger's logfmt lines and its START, END and REPORT lines. It relays
// the runtime's output in pieces, so one may start within a line.
var emulatorLine = regexp.MustCompile(`time=\d{4}-\d\d-\d\dT\S+ level=\w+ msg=|(START|END|REPORT) RequestId: `)

// functionPart is what of a line of the emulator's output is the
// function's: the line up to where the emulator's own begins.
func functionPart(l string) string {
	if loc := emulatorLine.FindStringIndex(l); loc != nil {
		return strings.TrimSpace(l[:loc[0]])
	}
	return l
}
