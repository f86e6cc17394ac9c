package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

func benchPayload(b *testing.B) []byte {
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: "/bench", RawQueryString: "x=1",
		Headers: map[string]string{"host": "id.lambda-url.us-east-1.on.aws", "content-type": "application/json"},
		Body:    `{"hello":"world"}`,
	}
	ev.RequestContext.DomainName = "id.lambda-url.us-east-1.on.aws"
	ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = "POST", "/bench"
	ev.RequestContext.HTTP.Protocol, ev.RequestContext.HTTP.SourceIP = "HTTP/1.1", "192.0.2.1"
	p, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchHandler(n int) http.Handler {
	body := bytes.Repeat([]byte("lmigo-bench-body"), n/16)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})
}

// BenchmarkServe: one buffered request from payload bytes to answer
// bytes: lmigo's Handler beside api-proxy's httpadapter (decode, proxy,
// encode as aws-lambda-go would).
func BenchmarkServe(b *testing.B) {
	p := benchPayload(b)
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
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
		b.Run("adapter=api-proxy/body="+size.name, func(b *testing.B) {
			a := httpadapter.NewV2(h)
			b.ReportAllocs()
			for b.Loop() {
				var ev events.APIGatewayV2HTTPRequest
				if err := json.Unmarshal(p, &ev); err != nil {
					b.Fatal(err)
				}
				resp, err := a.ProxyWithContext(context.Background(), ev)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(size.n))
		})
	}
}
