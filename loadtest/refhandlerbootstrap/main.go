// Command refhandlerbootstrap is demo.Invoker, a lambda.Handler of the
// user's own, served by aws-lambda-go v1.55.1's lambda.Start: the reference
// for lmigo-handler (loadtest/handlerbootstrap).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
)

func main() {
	lambda.Start(demo.Invoker{})
}
