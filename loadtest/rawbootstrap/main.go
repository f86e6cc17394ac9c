// Command rawbootstrap is lmigo's reference bootstrap with the raw handler:
// the demo workload of cmd/bootstrap/demo served by demo.HandleRaw, which
// writes its response into the worker's buffer (concurrent.RawHandler).
// The load test runs it as the runtime lmigo-raw beside lmigo (the typed
// handler, cmd/bootstrap) and aws-lambda-go.
package main

import (
	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	concurrent.Start(concurrent.RawHandler(demo.HandleRaw))
}
