package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"

	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// Bounds of a user's events file: it comes from outside, so nothing in it
// may make the load test read or hold without end.
const (
	maxEventsFile = 64 << 20 // the whole file
	maxEvent      = 6 << 20  // one event: Lambda's request limit
	maxEvents     = 100000   // events in the file
)

// parseEvents reads a file of JSON events: one JSON array of them, or one
// event a line (blank lines skipped). Each event is returned compacted,
// as it is sent.
func parseEvents(b []byte) ([][]byte, error) {
	if len(b) > maxEventsFile {
		return nil, fmt.Errorf("events: file of %d bytes, more than %d", len(b), maxEventsFile)
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, errors.New("events: the file holds no event")
	}
	var out [][]byte
	add := func(where string, raw []byte) error {
		if len(raw) > maxEvent {
			return fmt.Errorf("events: %s: an event of %d bytes, more than Lambda's %d", where, len(raw), maxEvent)
		}
		if len(out) >= maxEvents {
			return fmt.Errorf("events: more than %d events", maxEvents)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return fmt.Errorf("events: %s: %w", where, err)
		}
		out = append(out, c.Bytes())
		return nil
	}
	if trimmed[0] == '[' {
		// A whole array, unless the first line is an array event of its
		// own (then the file is one event a line).
		var arr []json.RawMessage
		if err := json.Unmarshal(trimmed, &arr); err == nil {
			if len(arr) == 0 {
				return nil, errors.New("events: the array holds no event")
			}
			for i, raw := range arr {
				if err := add(fmt.Sprintf("element %d", i+1), raw); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxEvent+1)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if !json.Valid(raw) {
			return nil, fmt.Errorf("events: line %d is not one JSON value (want a JSON array of events, or one event a line)", line)
		}
		if err := add(fmt.Sprintf("line %d", line), raw); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("events: line %d: %w", line+1, err)
	}
	return out, nil
}

// readEvents reads and parses the events file at path.
func readEvents(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEventsFile+1))
	if err != nil {
		return nil, err
	}
	evs, err := parseEvents(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return evs, nil
}

// eventItems turns a user's events into the items of a load, in the
// file's order or shuffled by seed. An answer is right when it is not an
// error and, with expect set, its body matches expect.
func eventItems(evs [][]byte, shuffle bool, seed uint64, expect *regexp.Regexp) []item {
	check := func(o outcome) bool { return o.FunctionError == "" && (expect == nil || expect.Match(o.Body)) }
	items := make([]item, len(evs))
	for i, ev := range evs {
		items[i] = item{name: fmt.Sprintf("event %d", i+1), payload: ev, check: check}
	}
	if shuffle {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	}
	return items
}

// maxUnzipped bounds the bootstrap taken from a zip: Lambda's limit on a
// function's unzipped code.
const maxUnzipped = 250 << 20

// userBootstrap returns the binary to run for path: path itself, or, for
// a deployment zip (as lmigo-pack writes it), its "bootstrap" entry
// written to a new temporary directory that cleanup removes.
func userBootstrap(path string) (bin string, cleanup func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || !bytes.Equal(magic, []byte("PK\x03\x04")) {
		return path, func() {}, nil
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if zf.Name != "bootstrap" {
			continue
		}
		if zf.UncompressedSize64 > maxUnzipped {
			return "", nil, fmt.Errorf("%s: bootstrap of %d bytes, more than Lambda's %d unzipped", path, zf.UncompressedSize64, maxUnzipped)
		}
		dir, err := os.MkdirTemp("", "lmigo-function-")
		if err != nil {
			return "", nil, err
		}
		cleanup = func() { _ = os.RemoveAll(dir) }
		bin = filepath.Join(dir, "bootstrap")
		if err := unzipTo(zf, bin); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("%s: %w", path, err)
		}
		return bin, cleanup, nil
	}
	return "", nil, fmt.Errorf("%s: a zip without a bootstrap entry at its root (lmigo-pack writes one)", path)
}

func unzipTo(zf *zip.File, out string) (err error) {
	r, err := zf.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	n, err := io.Copy(w, io.LimitReader(r, maxUnzipped+1))
	if err == nil && n > maxUnzipped {
		err = fmt.Errorf("bootstrap larger than %d bytes unzipped", maxUnzipped)
	}
	return err
}

// eventsWorkload is the workload of a user's events (config.userItems).
const eventsWorkload = "events"

// workload is the workload named so: the user's events, or one of
// parseWorkload's.
func (c *config) workload(name string) (workload, error) {
	if name == eventsWorkload {
		if len(c.userItems) == 0 {
			return workload{}, errors.New("workload events: no events (-events FILE)")
		}
		return workload{name: name, items: c.userItems}, nil
	}
	return parseWorkload(name)
}

// useEvents sets c's workload to the user's events: those of -events, or
// without it the empty event {}, each answer checked by -expect or else
// right when it is not an error.
func (c *config) useEvents() error {
	var expect *regexp.Regexp
	if c.Expect != "" {
		re, err := regexp.Compile(c.Expect)
		if err != nil {
			return fmt.Errorf("-expect: %w", err)
		}
		expect = re
	}
	evs, desc := [][]byte{[]byte(`{}`)}, "the empty event {}"
	if c.Events != "" {
		var err error
		if evs, err = readEvents(c.Events); err != nil {
			return err
		}
		order := "in the file's order"
		if c.Shuffle {
			order = "shuffled"
		}
		desc = fmt.Sprintf("%d event(s) of %s, %s", len(evs), filepath.Base(c.Events), order)
	}
	if expect != nil {
		desc += ", answers matching " + c.Expect
	} else {
		desc += ", any answer not an error right"
	}
	c.Workload, c.eventsDesc = eventsWorkload, desc
	c.userItems = eventItems(evs, c.Shuffle, 1, expect)
	return nil
}

// userTarget is where a user's function runs when -target is not given:
// the emulator's LMI mode, or, where it cannot run (not root, no
// unshare, no aws-lambda-rie), the fake Runtime API, said on stderr.
func userTarget(stderr io.Writer) string {
	err := rie.Supported()
	if err == nil {
		_, err = rie.Binary()
	}
	if err != nil {
		fmt.Fprintf(stderr, "the AWS emulator cannot run here (%v): the fake Runtime API serves the function instead (-target fake)\n", err)
		return targetFake
	}
	return targetRIE
}
