// Command handlerbootstrap is lmigo's reference bootstrap with a
// lambda.Handler of the user's own: the demo workload of cmd/bootstrap/demo
// served by demo.Invoker, whose Invoke returns the response bytes. The load
// test runs it as the runtime lmigo-handler, beside aws-lambda-go-handler
// (loadtest/refhandlerbootstrap), the same handler under aws-lambda-go.
package main

import (
	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	concurrent.Start(demo.Invoker{})
}
