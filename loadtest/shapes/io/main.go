// Command io is an I/O-bound function of known shape: 2 ms of CPU, then
// 38 ms of waiting. Sized, it should get about 20 invocations per vCPU.
package main

import (
	"time"

	"github.com/lmigo/lmigo/loadtest/shapes/shape"
)

func main() { shape.Start(shape.Shape{CPU: 2 * time.Millisecond, Wait: 38 * time.Millisecond}) }
