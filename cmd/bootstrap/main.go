// Command bootstrap is lmigo's reference bootstrap: the demo workload of
// package demo served by the concurrent runtime.
package main

import (
	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	concurrent.Start(demo.Handle)
}
