// Command cpu is a CPU-bound function of known shape: 20 ms of CPU an
// invocation, no waiting. Sized, it should get about 1 invocation per vCPU.
package main

import (
	"time"

	"github.com/lmigo/lmigo/loadtest/shapes/shape"
)

func main() { shape.Start(shape.Shape{CPU: 20 * time.Millisecond}) }
