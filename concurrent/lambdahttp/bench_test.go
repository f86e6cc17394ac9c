package lambdahttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// benchSizes: the response body of each benchmark; the request is a
// small POST.
var benchSizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}}

func benchHandler(n int) http.Handler {
	body := bytes.Repeat([]byte("lmigo-bench-body"), n/16)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})
}

// BenchmarkServe: one request from payload bytes to answer bytes, per
// adapter: lmigo buffered (Handler into the runtime's buffer), lmigo
// streamed (StreamingHandler through WriteTo), aws-lambda-go's lambdaurl
// (read whole). api-proxy's is in the compare module.
func BenchmarkServe(b *testing.B) {
	for _, size := range benchSizes {
		p := payload(b, event("POST", "/bench?x=1", `{"hello":"world"}`, map[string]string{"content-type": "application/json"}))
		h := benchHandler(size.n)
		b.Run("adapter=lmigo-buffered/body="+size.name, func(b *testing.B) {
			fn := lambdahttp.Handler(h)
			var out concurrent.Buffer
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				if err := fn(context.Background(), p, &out); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(size.n))
		})
		b.Run("adapter=lmigo-streamed/body="+size.name, func(b *testing.B) {
			fn := lambdahttp.StreamingHandler(h)
			b.ReportAllocs()
			for b.Loop() {
				_, _, r, err := fn.InvokeStream(context.Background(), p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(size.n))
		})
		b.Run("adapter=lambdaurl/body="+size.name, func(b *testing.B) {
			fn := lambdaurl.Wrap(h)
			b.ReportAllocs()
			for b.Loop() {
				ev := new(events.LambdaFunctionURLRequest)
				if err := json.Unmarshal(p, ev); err != nil {
					b.Fatal(err)
				}
				r, err := fn(context.Background(), ev)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(size.n))
		})
	}
}
