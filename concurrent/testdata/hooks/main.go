// Command hooks is a bootstrap with shutdown hooks, for the emulator test
// of concurrent.WithSIGTERM: each hook writes a line to stderr, where the runtime logs, the second
// panics, and the handler answers at once.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	concurrent.Start(func(context.Context, any) (string, error) { return "ok", nil },
		concurrent.WithSIGTERM(
			func() { fmt.Fprintln(os.Stderr, "hook 1 ran") },
			func() { panic("hook 2 fails") },
			func() { fmt.Fprintln(os.Stderr, "hook 3 ran") },
		))
}
