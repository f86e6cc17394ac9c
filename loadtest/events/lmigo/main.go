// Command lmigo is the load test's bootstrap for the realistic events: the
// handler of the event named by LOADTEST_EVENT (apigw, sqs, s3, github),
// served by lmigo's runtime. It links the built-in codec only; build tags
// codec_jsonv2, codec_goccy, codec_sonic and codec_segmentio link the
// others, which LMIGO_JSON_CODEC then selects.
package main

import (
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

func main() {
	concurrent.Start(events.HandlerFromEnv())
}
