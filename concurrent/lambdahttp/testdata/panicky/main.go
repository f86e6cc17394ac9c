// Command panicky is a test-only bootstrap: an http.Handler served by
// lambdahttp.Handler through concurrent.Start. /ok/{i} answers
// "answer {i}", /panic panics.
package main

import (
	"io"
	"net/http"
	"strings"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

func main() {
	concurrent.Start(lambdahttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "answer "+strings.TrimPrefix(r.URL.Path, "/ok/"))
	})))
}
