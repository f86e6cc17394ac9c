// Command awslambdago is the aws-lambda-go v1.55.1 side of the realistic
// events: the handler of the event named by LOADTEST_EVENT served by
// lambda.Start, as users write it today.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/lmigo/lmigo/loadtest/events"
)

func main() {
	h, err := events.Handler(os.Getenv("LOADTEST_EVENT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "LOADTEST_EVENT:", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
