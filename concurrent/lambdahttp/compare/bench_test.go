package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// benchPayload is the small POST of the benchmarks as the door sends it.
func benchPayload(b *testing.B, door string) []byte {
	switch door {
	case "REST":
		return ownEvent(b, "bench-rest.json")
	case "ALB":
		return ownEvent(b, "bench-alb.json")
	}
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

// BenchmarkServe: one request from payload bytes to answer bytes, per
// door and adapter, in one run: lmigo's Handler (decode, serve, write the
// answer into the runtime's buffer) beside api-proxy's httpadapter (decode,
// proxy, encode as aws-lambda-go would) and, for payload 2.0, lambdaurl
// (decode, serve, read the stream). The response body is 1 KiB or 1 MiB.
// A load balancer takes answers up to 1 MB: lmigo's bound is lifted to
// 2 MiB here so that both adapters do the same work.
func BenchmarkServe(b *testing.B) {
	for _, door := range []string{"2.0", "REST", "ALB"} {
		p := benchPayload(b, door)
		for _, size := range []struct {
			name string
			n    int
		}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
			h := benchHandler(size.n)
			name := "door=" + door + "/body=" + size.name + "/adapter="
			b.Run(name+"lmigo", func(b *testing.B) {
				fn := lambdahttp.Handler(h, lambdahttp.WithMaxResponseBytes(2<<20))
				var out concurrent.Buffer
				b.ReportAllocs()
				b.SetBytes(int64(size.n))
				for b.Loop() {
					out.Reset()
					if err := fn(context.Background(), p, &out); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"api-proxy", func(b *testing.B) {
				serve := apiProxyServe(b, door, h)
				b.ReportAllocs()
				b.SetBytes(int64(size.n))
				for b.Loop() {
					if err := serve(p); err != nil {
						b.Fatal(err)
					}
				}
			})
			if door != "2.0" {
				continue
			}
			b.Run(name+"lambdaurl", func(b *testing.B) {
				fn := lambdaurl.Wrap(h)
				b.ReportAllocs()
				b.SetBytes(int64(size.n))
				for b.Loop() {
					var ev events.LambdaFunctionURLRequest
					if err := json.Unmarshal(p, &ev); err != nil {
						b.Fatal(err)
					}
					r, err := fn(context.Background(), &ev)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// apiProxyServe returns a function that serves one payload through
// api-proxy's adapter for door, as aws-lambda-go runs it: decode, proxy,
// encode.
func apiProxyServe(b *testing.B, door string, h http.Handler) func([]byte) error {
	switch door {
	case "REST":
		return proxyServe(httpadapter.New(h).ProxyWithContext)
	case "ALB":
		return proxyServe(httpadapter.NewALB(h).ProxyWithContext)
	}
	return proxyServe(httpadapter.NewV2(h).ProxyWithContext)
}

func proxyServe[E, R any](proxy func(context.Context, E) (R, error)) func([]byte) error {
	return func(p []byte) error {
		var ev E
		if err := json.Unmarshal(p, &ev); err != nil {
			return err
		}
		resp, err := proxy(context.Background(), ev)
		if err != nil {
			return err
		}
		_, err = json.Marshal(resp)
		return err
	}
}

// TestBenchAnswersAlike: what the benchmarks time is the same answer from
// each adapter: status and body, read as the door's client would.
func TestBenchAnswersAlike(t *testing.T) {
	for _, door := range []string{"2.0", "REST", "ALB"} {
		h := benchHandler(1 << 20)
		var p []byte
		switch door {
		case "REST":
			p = ownEvent(t, "bench-rest.json")
		case "ALB":
			p = ownEvent(t, "bench-alb.json")
		default:
			p = awsEvent(t, "lambda-urls-request.json")
		}
		var out concurrent.Buffer
		if err := lambdahttp.Handler(h, lambdahttp.WithMaxResponseBytes(2<<20))(context.Background(), p, &out); err != nil {
			t.Fatal(err)
		}
		ad := map[string]string{"REST": "REST", "ALB": "ALB", "2.0": "2.0"}[door]
		theirs, err := apiProxy(t, ad, h, p)
		if err != nil {
			t.Fatal(err)
		}
		gs, _, gb := clientView(t, out.B)
		ws, _, wb := clientView(t, theirs)
		if gs != ws || gb != wb || len(gb) != 1<<20 {
			t.Errorf("%s: lambdahttp %d %d bytes, api-proxy %d %d bytes", door, gs, len(gb), ws, len(wb))
		}
	}
}
