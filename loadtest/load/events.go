package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
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

// Event is one of the user's events, compact as it is sent, with where
// it came from.
type Event struct {
	payload []byte
	file    string // its file's base name
	where   string // "line 3", "element 2"; "" when its file holds it alone
}

// name names the event in reports: its file, and its place in it.
func (e Event) name() string {
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
func parseEvents(b []byte) ([]Event, error) {
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
		out := make([]Event, 0, len(arr))
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
		return []Event{ev}, nil
	}
	out := make([]Event, 0, len(vals))
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
func compactEvent(raw []byte, where string) (Event, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return Event{}, fmt.Errorf("events: %s: %w", where, err)
	}
	if c.Len() > maxEvent {
		if where == "" {
			where = "the event"
		}
		return Event{}, fmt.Errorf("events: %s: an event of %d bytes, more than Lambda's %d", where, c.Len(), maxEvent)
	}
	return Event{payload: c.Bytes(), where: where}, nil
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

// ReadEvents reads the events of path: a file, or a directory whose
// .json and .jsonl files are read in the order of their names, each as
// parseEvents reads a file.
func ReadEvents(path string) ([]Event, error) {
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
	var out []Event
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
func readEventsFile(path string, limit, most int) ([]Event, error) {
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

// EventsWorkload names the workload of a user's events (UserEvents).
const EventsWorkload = "events"

// eventItems turns a user's events into the items of a load, in the
// file's order or shuffled by seed. An answer is right when it is not an
// error and its body matches expect, or without expect when it is not an
// HTTP door's response of status 400 or more.
func eventItems(evs []Event, shuffle bool, seed uint64, expect *regexp.Regexp) []Item {
	check := func(o Outcome) bool {
		if expect != nil {
			return o.FunctionError == "" && expect.Match(o.Body)
		}
		return o.FunctionError == "" && !httpError(o.Body)
	}
	files := map[string]bool{}
	for _, ev := range evs {
		files[ev.file] = true
	}
	items := make([]Item, len(evs))
	for i, ev := range evs {
		items[i] = Item{Name: ev.name(), Payload: ev.payload, Check: check}
		if len(files) > 1 {
			items[i].Group = ev.file // the costs of each file apart
		}
	}
	if shuffle {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	}
	return items
}

// eventsSource names where events came from: their file, or the number
// of files of the directory that held them.
func eventsSource(path string, evs []Event) string {
	files := map[string]bool{}
	for _, e := range evs {
		files[e.file] = true
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Sprintf("%d files in %s", len(files), filepath.Base(filepath.Clean(path)))
	}
	return filepath.Base(path)
}

// UserEvents are the items of a user's events evs, read from path, or
// with no path of the empty event {}; in their order or shuffled, each
// answer checked by expect, or without it as eventItems says. desc says
// what they are, for the report.
func UserEvents(path string, evs []Event, shuffle bool, expect *regexp.Regexp) (items []Item, desc string) {
	desc = "the empty event {}"
	if path == "" {
		evs = []Event{{payload: []byte(`{}`), file: "{}"}}
	} else {
		order := "in order"
		if shuffle {
			order = "shuffled"
		}
		desc = fmt.Sprintf("%d event(s) of %s, %s", len(evs), eventsSource(path, evs), order)
	}
	if expect != nil {
		desc += ", answers matching " + expect.String()
	} else {
		desc += ", any answer right but an error or an HTTP error"
	}
	return eventItems(evs, shuffle, 1, expect), desc
}
