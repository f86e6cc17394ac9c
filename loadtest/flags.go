package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/lmigo/lmigo/loadtest/load"
)

// What the commands share of their flags: repeatable flags, the flags
// given, the environment's pairs, paths read from the working directory,
// and a user's function's events.

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseArgs parses args with fs, which takes no positional argument, and
// returns the names of the flags given.
func parseArgs(fs *flag.FlagSet, args []string) (given map[string]bool, err error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given, nil
}

// checkEnv says which -env pairs are not KEY=VALUE.
func checkEnv(env []string) error {
	var errs []error
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			errs = append(errs, fmt.Errorf("-env %q: want KEY=VALUE", kv))
		}
	}
	return errors.Join(errs...)
}

// defaultOut is loadtest/out in the source tree (git-ignored), run from
// the repository's root or from loadtest/, or ./loadtest-out elsewhere (a
// prebuilt load test on an EC2 host).
func defaultOut() string {
	for _, dir := range []string{"loadtest", "."} {
		if fi, err := os.Stat(filepath.Join(dir, "rawbootstrap")); err == nil && fi.IsDir() {
			return filepath.Join(dir, "out")
		}
	}
	return "loadtest-out"
}

// A relative path is read from the working directory, which `go -C
// loadtest` moves to loadtest/: a path relative to the caller's
// directory is then not found, and the error must say where it looked.

// inputError adds to err, about path given with flag, the directory a
// relative path that does not exist was read from.
func inputError(flag, path string, err error) error {
	if err == nil || filepath.IsAbs(path) || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	wd, werr := os.Getwd()
	if werr != nil {
		return err
	}
	hint := ""
	if _, serr := os.Stat(filepath.Join("..", path)); serr == nil {
		hint = fmt.Sprintf("; %s is there from the directory above, where go -C was run", filepath.Join("..", path))
	}
	return fmt.Errorf("%s: %w (a relative path is read from %s%s)", flag, err, wd, hint)
}

// userEvents are the items of a user's events: those of -events, or
// without it the empty event {}, each answer checked by -expect or else
// as load.UserEvents says; and what they are, for the report.
func userEvents(events, expect string, shuffle bool) ([]load.Item, string, error) {
	var re *regexp.Regexp
	if expect != "" {
		var err error
		if re, err = regexp.Compile(expect); err != nil {
			return nil, "", fmt.Errorf("-expect: %w", err)
		}
	}
	var evs []load.Event
	if events != "" {
		var err error
		if evs, err = load.ReadEvents(events); err != nil {
			return nil, "", inputError("-events", events, err)
		}
	}
	items, desc := load.UserEvents(events, evs, shuffle, re)
	return items, desc, nil
}
