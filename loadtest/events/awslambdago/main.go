// Command awslambdago is the aws-lambda-go v1.55.1 side of the realistic
// events: the handler of the event named by LOADTEST_EVENT served by
// lambda.Start, as users write it today.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

func main() {
	lambda.Start(events.HandlerFromEnv())
}
