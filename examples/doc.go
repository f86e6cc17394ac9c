// Package examples holds small Lambda functions served by lmigo. Each is a
// main package that moved from aws-lambda-go by changing one line:
//
//	lambda.Start(handle)      // before
//	concurrent.Start(handle)  // after
//
// The functions:
//
//   - httpapi: an API Gateway HTTP API (payload format 2.0) or Lambda
//     function URL handler, with events.APIGatewayV2HTTPRequest.
//   - sqs: an SQS batch handler that reports partial batch failures with
//     events.SQSEventResponse.
//   - settings: a setting kept in a cache that every invocation shares,
//     refreshed without a lock held across the call; its test measures
//     how many invocations one refresh stalls either way (docs/lmi.md).
//   - profiled: a function of CPU work that writes its own CPU profile
//     when CPU_PROFILE names a file, split by invocation
//     (docs/observability.md).
//
// Each has a test that serves it through the runtime with
// concurrent/lambdatest (httpapi and sqs with realistic events from their
// testdata) and checks with lambdatest.CheckIsolation that invocations served at once
// do not see each other's state. Zip one for Lambda, from the repository's root, with
// `go -C examples run github.com/lmigo/lmigo/cmd/lmigo-pack -o ../dist ./httpapi`
// (dist/httpapi-arm64.zip and dist/httpapi-amd64.zip).
package examples
