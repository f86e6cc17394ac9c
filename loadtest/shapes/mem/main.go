// Command mem is io holding 200 MiB while it runs: 2 ms of CPU, 38 ms of
// waiting, 200 MiB per invocation in flight. Sized, memory sets its N or
// its memory per vCPU.
package main

import (
	"time"

	"github.com/lmigo/lmigo/loadtest/shapes/shape"
)

func main() {
	shape.Start(shape.Shape{CPU: 2 * time.Millisecond, Wait: 38 * time.Millisecond, Hold: 200 << 20})
}
