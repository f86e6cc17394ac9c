package concurrent

import (
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

// BenchmarkEvent runs each realistic event through the adapter (decode,
// handler, encode into the worker's buffer) with each codec, beside
// aws-lambda-go's lambda.NewHandler(f).Invoke on the same handler and
// payload. README (JSON codecs) quotes it.
func BenchmarkEvent(b *testing.B) {
	for _, ev := range events.All() {
		for _, name := range append([]string{stdCodec}, altCodecs...) {
			b.Run(ev.Name+"/"+name, func(b *testing.B) {
				h, err := newHandler(ev.Handler, handlerConfig{codec: mustCodec(b, name, handlerConfig{})})
				if err != nil {
					b.Fatal(err)
				}
				ctx := benchContext(b)
				out := new(Buffer)
				b.ReportAllocs()
				b.SetBytes(int64(len(ev.Payload)))
				for b.Loop() {
					out.Reset()
					if _, err := h.call(ctx, ev.Payload, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(ev.Name+"/aws-lambda-go", func(b *testing.B) {
			h := lambda.NewHandler(ev.Handler)
			ctx := benchContext(b)
			b.ReportAllocs()
			b.SetBytes(int64(len(ev.Payload)))
			for b.Loop() {
				if _, err := h.Invoke(ctx, ev.Payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
