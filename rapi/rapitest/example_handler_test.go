package rapitest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// A user's handler, served by lmigo at N=4 against the fake and invoked
// eight times at once: each answer, and the accounting.
func Example_handler() {
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: 4, Queue: true})
	if err != nil {
		panic(err)
	}
	defer api.Close()

	shout := func(_ context.Context, name string) (string, error) {
		return strings.ToUpper(name) + "!", nil
	}
	rt, err := concurrent.New(shout, concurrent.WithLookupEnv(api.Env(map[string]string{"AWS_LAMBDA_LOG_LEVEL": "ERROR"})))
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	names := []string{"ada", "bo", "cy", "di", "ed", "flo", "gus", "hal"}
	answers := make([]string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			res, err := api.Invoke(context.Background(), rapitest.Request{Payload: []byte(`"` + name + `"`)})
			if err != nil || res.Err != nil {
				answers[i] = fmt.Sprint(err, res.Err)
				return
			}
			answers[i] = string(res.Body) + " " + res.ContentType
		})
	}
	wg.Wait()
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(answers[:3], "\n"))
	st := api.Stats()
	fmt.Println("answered exactly once:", st.Answered() == st.Invocations && st.Duplicates == 0 && st.NoEcho == 0)
	fmt.Println("within N:", st.MaxOutstanding <= 4, st.Violations == 0)
	// Output:
	// "ADA!" application/json
	// "BO!" application/json
	// "CY!" application/json
	// answered exactly once: true
	// within N: true true
}
