package target

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// maxUnzipped bounds the bootstrap taken from a zip: Lambda's limit on a
// function's unzipped code.
const maxUnzipped = 250 << 20

// UserBootstrap returns the binary to run for path: path itself, or, for
// a deployment zip (as lmigo-pack writes it), its "bootstrap" entry
// written to a new temporary directory that cleanup removes.
func UserBootstrap(path string) (bin string, cleanup func(), err error) {
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

// Default is where a user's function runs when -target is not given:
// the emulator's LMI mode, or, where it cannot run (not root, no
// unshare, no aws-lambda-rie), the fake Runtime API, said on stderr.
func Default(stderr io.Writer) string {
	err := rie.Supported()
	if err == nil {
		_, err = rie.Binary()
	}
	if err != nil {
		fmt.Fprintf(stderr, "the AWS emulator cannot run here (%v): the fake Runtime API serves the function instead (-target fake)\n", err)
		return Fake
	}
	return RIE
}
