// Command refbootstrap is the reference the load test compares lmigo with:
// the demo workload of cmd/bootstrap/demo served by aws-lambda-go v1.55.1's
// lambda.Start, the way users write it today. The load test builds it with
// the same flags as lmigo's bootstrap (CGO_ENABLED=0, -tags lambda.norpc,
// -trimpath). aws-lambda-go serves AWS_LAMBDA_MAX_CONCURRENCY invocations
// at once with one polling goroutine each, and exits after a panic.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
)

func main() {
	lambda.Start(demo.Handle)
}
