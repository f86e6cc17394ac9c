package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of a user's events: they come from outside, so nothing in them
// may make the load test read or hold without end.
const (
	maxEventsFile = 64 << 20 // the events files together
	maxEvent      = 6 << 20  // one event: Lambda's request limit
	maxEvents     = 100000   // events in all
)

// event is one of the user's events, compact as it is sent, with where
// it came from.
type event struct {
	payload []byte
	file    string // its file's base name
	where   string // "line 3", "element 2"; "" when its file holds it alone
}

// name names the event in reports: its file, and its place in it.
func (e event) name() string {
	if e.where == "" {
		return e.file
	}
	return e.file + " " + e.where
}

// eventsWant says what an events file may hold, for errors.
const eventsWant = "want one JSON event, a JSON array of events, or one event a line"

// parseEvents reads the events of one file: one JSON value, which is the
// event (sam local invoke -e takes such a file) unless it is an array,
// whose elements are then the events; or several values, each starting
// on a line of its own, each an event (blank lines and a UTF-8 byte order
// mark are skipped). A value may span lines.
func parseEvents(b []byte) ([]event, error) {
	if len(b) > maxEventsFile {
		return nil, fmt.Errorf("events: %d bytes, more than %d", len(b), maxEventsFile)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	var vals [][2]int // the start and end of each value
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		end := 0
		if n := len(vals); n > 0 {
			end = vals[n-1][1]
		}
		start := end + len(b[end:]) - len(bytes.TrimLeft(b[end:], " \t\r\n"))
		if start == len(b) {
			break
		}
		if len(vals) > 0 && !bytes.Contains(b[end:start], []byte("\n")) {
			line, col := position(b, start)
			return nil, fmt.Errorf("events: line %d, column %d: a second JSON value on the line of the one before (%s)", line, col, eventsWant)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, decodeError(b, start, err)
		}
		if len(vals) == maxEvents {
			return nil, fmt.Errorf("events: more than %d events", maxEvents)
		}
		vals = append(vals, [2]int{start, int(dec.InputOffset())})
	}
	switch {
	case len(vals) == 0:
		return nil, errors.New("events: the file holds no event")
	case len(vals) == 1 && b[vals[0][0]] == '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(b[vals[0][0]:vals[0][1]], &arr); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		if len(arr) == 0 {
			return nil, errors.New("events: the array holds no event")
		}
		out := make([]event, 0, len(arr))
		for i, raw := range arr {
			ev, err := compactEvent(raw, fmt.Sprintf("element %d", i+1))
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		return out, nil
	case len(vals) == 1:
		ev, err := compactEvent(b[vals[0][0]:vals[0][1]], "")
		if err != nil {
			return nil, err
		}
		return []event{ev}, nil
	}
	out := make([]event, 0, len(vals))
	for _, v := range vals {
		line, _ := position(b, v[0])
		ev, err := compactEvent(b[v[0]:v[1]], fmt.Sprintf("line %d", line))
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// compactEvent is raw compacted, within Lambda's request limit.
func compactEvent(raw []byte, where string) (event, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return event{}, fmt.Errorf("events: %s: %w", where, err)
	}
	if c.Len() > maxEvent {
		if where == "" {
			where = "the event"
		}
		return event{}, fmt.Errorf("events: %s: an event of %d bytes, more than Lambda's %d", where, c.Len(), maxEvent)
	}
	return event{payload: c.Bytes(), where: where}, nil
}

// decodeError says where and why the value starting at start does not
// decode.
func decodeError(b []byte, start int, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := position(b, start)
		return fmt.Errorf("events: line %d, column %d: a JSON value cut short by the end of the file", line, col)
	}
	at := start
	if se, ok := errors.AsType[*json.SyntaxError](err); ok && se.Offset > 0 {
		at = max(start, int(se.Offset)-1)
	}
	line, col := position(b, at)
	return fmt.Errorf("events: line %d, column %d: not JSON: %w (%s)", line, col, err, eventsWant)
}

// position is the line and column (from 1, in bytes) of offset i of b.
func position(b []byte, i int) (line, col int) {
	i = min(i, len(b))
	line = 1 + bytes.Count(b[:i], []byte("\n"))
	return line, i - bytes.LastIndexByte(b[:i], '\n')
}

// readEvents reads the events of path: a file, or a directory whose
// .json and .jsonl files are read in the order of their names, each as
// parseEvents reads a file.
func readEvents(path string) ([]event, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return readEventsFile(path, maxEventsFile, maxEvents)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []event
	budget := maxEventsFile
	for _, e := range ents { // sorted by name
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if ext != ".json" && ext != ".jsonl" {
			continue
		}
		p := filepath.Join(path, e.Name())
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		} else if budget -= int(min(fi.Size(), maxEventsFile+1)); budget < 0 {
			return nil, fmt.Errorf("%s: events files of more than %d bytes together", path, maxEventsFile)
		}
		evs, err := readEventsFile(p, maxEventsFile, maxEvents-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no .json or .jsonl file in the directory", path)
	}
	return out, nil
}

// readEventsFile reads and parses the events file at path, of at most
// limit bytes and most events.
func readEventsFile(path string, limit, most int) ([]event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	evs, err := parseEvents(b)
	if err == nil && len(evs) > most {
		err = fmt.Errorf("events: more than %d events", maxEvents)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range evs {
		evs[i].file = filepath.Base(path)
	}
	return slices.Clip(evs), nil
}
