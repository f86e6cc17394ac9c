package lambdahttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// An http.ServeMux served buffered (concurrent.Start(h) in a bootstrap),
// called here as the runtime calls it, and its answer.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		ev := lambdahttp.Request(r.Context())
		w.Header().Set("Content-Type", "text/plain")
		http.SetCookie(w, &http.Cookie{Name: "seen", Value: "1"})
		_, _ = fmt.Fprintf(w, "hello %s via %s", r.PathValue("name"), ev.RequestContext.DomainName)
	})
	h := lambdahttp.Handler(mux) // concurrent.Start(h)

	payload := []byte(`{"version":"2.0","rawPath":"/hello/ada","headers":{},
		"requestContext":{"domainName":"example.lambda-url.us-east-1.on.aws","http":{"method":"GET"}}}`)
	var out concurrent.Buffer
	if err := h(context.Background(), payload, &out); err != nil {
		panic(err)
	}
	fmt.Println(string(out.B))

	// Streamed, for a Function URL in RESPONSE_STREAM mode.
	s := lambdahttp.StreamingHandler(mux)
	_, _, r, _ := s.InvokeStream(context.Background(), []byte(`{"version":"2.0","rawPath":"/hello/bo",
		"requestContext":{"domainName":"example","http":{"method":"GET"}}}`))
	b, _ := io.ReadAll(r)
	fmt.Printf("%q\n", b)
	// Output:
	// {"statusCode":200,"headers":{"Content-Type":"text/plain"},"cookies":["seen=1"],"body":"hello ada via example.lambda-url.us-east-1.on.aws"}
	// "{\"statusCode\":200,\"headers\":{\"Content-Type\":\"text/plain\"},\"cookies\":[\"seen=1\"]}\x00\x00\x00\x00\x00\x00\x00\x00hello bo via example"
}
