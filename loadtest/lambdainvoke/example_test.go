package lambdainvoke_test

import (
	"context"
	"fmt"
	"log"

	"github.com/lmigo/lmigo/loadtest/lambdainvoke"
)

// A deployed function, with the credentials and region of the environment
// (on EC2: the instance role and region).
func ExampleNew() {
	ctx := context.Background()
	inv, err := lambdainvoke.New(ctx, lambdainvoke.Options{FunctionName: "lmigo-demo", Qualifier: "live"})
	if err != nil {
		log.Fatal(err)
	}
	defer inv.Close()
	r, err := inv.Invoke(ctx, []byte(`{"id":1}`))
	switch {
	case err != nil:
		fmt.Println("invoke failed:", err)
	case r.Throttled:
		fmt.Println("throttled")
	case r.FunctionError != "":
		fmt.Println("function error:", r.FunctionError, string(r.Body))
	default:
		fmt.Println(r.Latency, string(r.Body))
	}
}

// The emulator's invoke endpoint: FunctionName "function", dummy
// credentials.
func ExampleNew_emulator() {
	ctx := context.Background()
	inv, err := lambdainvoke.New(ctx, lambdainvoke.Options{
		FunctionName: "function",
		Endpoint:     "http://127.0.0.1:8080",
		Static:       true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer inv.Close()
	_, _ = inv.Invoke(ctx, []byte(`{"size":1024}`))
}
