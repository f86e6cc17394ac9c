package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

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
