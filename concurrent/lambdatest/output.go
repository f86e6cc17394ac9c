package lambdatest

import (
	"bytes"
	"encoding/json"
	"sync"
)

// output files each line the runtime writes under the request ID it
// carries, until the invocation's Invoke takes them.
type output struct {
	mu    sync.Mutex
	byID  map[string]*lines
	ended map[string]bool // request IDs whose lines were taken
	late  []lateLine      // lines for an ended invocation
	other []string        // lines of no invocation (the runtime's own)
	told  int             // of other, how many takeOther returned
}

type lines struct{ logs, metrics []string }

// lateLine is a line carrying the request ID of an invocation that had
// ended when it was written.
type lateLine struct {
	id, line string
	metric   bool
}

// maxOther bounds the lines kept of no invocation (for a failed test's
// log) and the late ones (for CheckIsolation).
const maxOther = 1000

func (o *output) init() {
	o.byID = map[string]*lines{}
	o.ended = map[string]bool{}
}

// kind is what a writer takes: the handler's log lines, the runtime's
// own, or EMF documents.
type kind int

const (
	handlerLine kind = iota
	runtimeLine
	metricDoc
)

type writer struct {
	o    *output
	kind kind
}

// Write takes whole lines: the runtime writes each line in one Write.
func (w writer) Write(p []byte) (int, error) {
	for l := range bytes.Lines(p) {
		l = bytes.TrimRight(l, "\r\n")
		if len(l) == 0 {
			continue
		}
		if id, msg := requestID(l); !afterwards[msg] {
			w.o.add(id, string(l), w.kind)
		}
	}
	return len(p), nil
}

// requestID is the value of the line's first top-level requestId, the
// key matched exactly: the runtime writes it before any field of the
// handler's, which may carry a downstream's requestID. msg is the line's
// first message.
func requestID(line []byte) (id, msg string) {
	ms, _ := members(line)
	idSeen, msgSeen := false, false
	for _, m := range ms {
		switch {
		case m.key == "requestId" && !idSeen:
			idSeen = true
			_ = json.Unmarshal(m.value, &id)
		case m.key == "message" && !msgSeen:
			msgSeen = true
			_ = json.Unmarshal(m.value, &msg)
		}
	}
	return id, msg
}

// afterwards are the runtime's lines about an invocation once it ended
// (LMIGO_REPORT's report line, and the warning of goroutines it left):
// Result says the same of it (Err, Payload, Leftover), and they are
// neither its lines nor late ones.
var afterwards = map[string]bool{"invocation report": true, "goroutines outlived their invocation": true}

func (o *output) add(id, line string, k kind) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case id == "" || (o.ended[id] && k == runtimeLine):
		// The runtime's own line about an invocation that has ended (its
		// handler overran) is the runtime's to say, not the handler's.
		if len(o.other) < maxOther {
			o.other = append(o.other, line)
		}
	case o.ended[id]:
		if len(o.late) < maxOther {
			o.late = append(o.late, lateLine{id, line, k == metricDoc})
		}
	default:
		ls := o.byID[id]
		if ls == nil {
			ls = &lines{}
			o.byID[id] = ls
		}
		if k == metricDoc {
			ls.metrics = append(ls.metrics, line)
		} else {
			ls.logs = append(ls.logs, line)
		}
	}
}

// take returns the lines of the invocation id, which has ended: a line
// for it written later is late.
func (o *output) take(id string) (logs, metrics []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ls := o.byID[id]; ls != nil {
		logs, metrics = ls.logs, ls.metrics
		delete(o.byID, id)
	}
	o.ended[id] = true
	return logs, metrics
}

// takeLate returns the late lines written so far, and forgets them.
func (o *output) takeLate() []lateLine {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.late
	o.late = nil
	return l
}

// takeOther returns the lines of no invocation written since it was last
// called.
func (o *output) takeOther() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := append([]string(nil), o.other[o.told:]...)
	o.told = len(o.other)
	return l
}

// wedged returns the request IDs the runtime's last FATAL line names as
// hung, the line it writes before its wedged exit.
func (o *output) wedged() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.other) - 1; i >= 0; i-- {
		ms, _ := members([]byte(o.other[i]))
		fatal := false
		var hung []struct {
			RequestID string `json:"requestId"`
		}
		for _, m := range ms {
			switch m.key {
			case "level":
				fatal = string(m.value) == `"FATAL"`
			case "hung":
				_ = json.Unmarshal(m.value, &hung)
			}
		}
		if !fatal {
			continue
		}
		ids := make([]string, len(hung))
		for j, h := range hung {
			ids[j] = h.RequestID
		}
		return ids
	}
	return nil
}
