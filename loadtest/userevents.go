package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"

	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// eventItems turns a user's events into the items of a load, in the
// file's order or shuffled by seed. An answer is right when it is not an
// error and its body matches expect, or without expect when it is not an
// HTTP door's response of status 400 or more.
func eventItems(evs []event, shuffle bool, seed uint64, expect *regexp.Regexp) []item {
	check := func(o outcome) bool {
		if expect != nil {
			return o.FunctionError == "" && expect.Match(o.Body)
		}
		return o.FunctionError == "" && !httpError(o.Body)
	}
	files := map[string]bool{}
	for _, ev := range evs {
		files[ev.file] = true
	}
	items := make([]item, len(evs))
	for i, ev := range evs {
		items[i] = item{name: ev.name(), payload: ev.payload, check: check}
		if len(files) > 1 {
			items[i].group = ev.file // the costs of each file apart
		}
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
// as eventItems says.
func (c *config) useEvents() error {
	var expect *regexp.Regexp
	if c.Expect != "" {
		re, err := regexp.Compile(c.Expect)
		if err != nil {
			return fmt.Errorf("-expect: %w", err)
		}
		expect = re
	}
	evs, desc := []event{{payload: []byte(`{}`), file: "{}"}}, "the empty event {}"
	if c.Events != "" {
		var err error
		if evs, err = readEvents(c.Events); err != nil {
			return inputError("-events", c.Events, err)
		}
		order := "in order"
		if c.Shuffle {
			order = "shuffled"
		}
		desc = fmt.Sprintf("%d event(s) of %s, %s", len(evs), eventsSource(c.Events, evs), order)
	}
	if expect != nil {
		desc += ", answers matching " + c.Expect
	} else {
		desc += ", any answer right but an error or an HTTP error"
	}
	c.Workload, c.eventsDesc = eventsWorkload, desc
	c.userItems = eventItems(evs, c.Shuffle, 1, expect)
	return nil
}

// eventsSource names where events came from: their file, or the number
// of files of the directory that held them.
func eventsSource(path string, evs []event) string {
	files := map[string]bool{}
	for _, e := range evs {
		files[e.file] = true
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Sprintf("%d files in %s", len(files), filepath.Base(filepath.Clean(path)))
	}
	return filepath.Base(path)
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
