package codectest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

// BenchmarkEvent runs each realistic event through the adapter (decode,
// handler, encode) with each codec, by concurrent.NewHandler, beside
// aws-lambda-go's lambda.NewHandler(f).Invoke on the same handler and
// payload. NewHandler's Invoke copies the response out for the caller,
// which the runtime does not: lmigo's figures include that one copy.
// README (JSON codecs) quotes it.
func BenchmarkEvent(b *testing.B) {
	for _, ev := range events.All() {
		for _, name := range append([]string{stdCodec}, altCodecs...) {
			b.Run(ev.Name+"/"+name, func(b *testing.B) {
				benchInvoke(b, mustHandler(b, ev.Handler, concurrent.WithCodec(name)), ev.Payload)
			})
		}
		b.Run(ev.Name+"/aws-lambda-go", func(b *testing.B) {
			benchInvoke(b, lambda.NewHandler(ev.Handler), ev.Payload)
		})
	}
}

func benchInvoke(b *testing.B, h lambda.Handler, payload []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "bench"})
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, err := h.Invoke(ctx, payload); err != nil {
			b.Fatal(err)
		}
	}
}
