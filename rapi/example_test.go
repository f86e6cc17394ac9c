package rapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/lmigo/lmigo/rapi"
)

func Example() {
	// A stand-in Runtime API with one invocation.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-1")
		w.Header().Set("Lambda-Runtime-Deadline-Ms", "1700000000000")
		io.WriteString(w, `{"name":"world"}`)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("server got %s for %s\n", body, r.PathValue("id"))
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	client, err := rapi.New(srv.Listener.Addr().String())
	if err != nil {
		panic(err)
	}
	conn := client.Conn()
	defer conn.Close()

	ctx := context.Background()
	var inv rapi.Invocation
	if err := conn.Next(ctx, &inv); err != nil {
		panic(err)
	}
	fmt.Println(inv.RequestID, inv.DeadlineMs, string(inv.Payload))
	if err := conn.Respond(ctx, &inv, []byte(`"hello world"`), "application/json", false); err != nil {
		panic(err)
	}
	// Output:
	// req-1 1700000000000 {"name":"world"}
	// server got "hello world" for req-1
}
