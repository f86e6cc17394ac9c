// Command stream is a bootstrap that serves demo.Stream, the streaming part
// of the demo contract, for the emulator tests of streamed responses.
package main

import (
	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	concurrent.Start(demo.Stream)
}
