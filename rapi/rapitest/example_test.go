package rapitest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// A one-invocation runtime, written with net/http, against the fake.
func Example() {
	s, err := rapitest.New(rapitest.Options{MaxConcurrency: 1})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	base := "http://" + s.Addr() + "/2018-06-01/runtime/invocation/"
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}

	// No /next yet: the invoke is throttled, as on LMI.
	_, err = s.Invoke(context.Background(), rapitest.Request{Payload: []byte(`"early"`)})
	fmt.Println(errors.Is(err, rapitest.ErrThrottled))

	go func() { // the runtime: poll once, answer in upper case
		resp, err := hc.Get(base + "next")
		if err != nil {
			return
		}
		payload, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		id := resp.Header.Get("Lambda-Runtime-Aws-Request-Id")
		resp, err = hc.Post(base+id+"/response", "application/json", bytes.NewReader(bytes.ToUpper(payload)))
		if err == nil {
			resp.Body.Close()
		}
	}()
	if err := s.WaitPolls(context.Background(), 1); err != nil { // init done
		panic(err)
	}
	res, err := s.Invoke(context.Background(), rapitest.Request{Payload: []byte(`"hello"`)})
	fmt.Println(string(res.Body), err)

	st := s.Stats()
	fmt.Println(st.Invocations, st.Responses, st.Throttles, st.Violations)
	// Output:
	// true
	// "HELLO" <nil>
	// 1 1 1 0
}
