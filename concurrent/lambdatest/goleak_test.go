package lambdatest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/concurrent/lambdatest"
	"github.com/lmigo/lmigo/internal/fixtures/paramcache"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

const (
	verifyEnv  = "LAMBDATEST_VERIFY_CHILD"
	hangingEnv = "LAMBDATEST_HANGING_URL"
)

// leakedByHandler is a goroutine a handler starts and never ends.
func leakedByHandler(never chan struct{}) { <-never }

// callLeftHanging is a goroutine a handler starts whose HTTP call the
// server never answers.
func callLeftHanging(url string) {
	if resp, err := http.Get(url); err == nil {
		_ = resp.Body.Close()
	}
}

// TestVerifyTestMainChild is the child of TestVerifyTestMain: it serves a
// function, and this package's VerifyTestMain judges what it left.
func TestVerifyTestMainChild(t *testing.T) {
	switch os.Getenv(verifyEnv) {
	case "keep-alive":
		// paramcache's package-level client keeps its connection to the
		// stand-in, which the parent keeps up.
		f := lambdatest.Start(t, paramcache.Handle)
		if res := f.Invoke(paramcache.Event()); res.Err != nil || !strings.Contains(string(res.Payload), `"statusCode":200`) {
			t.Fatalf("paramcache: %s, %v", res.Payload, res.Err)
		}
	case "leak":
		never := make(chan struct{})
		f := lambdatest.Start(t, func(context.Context) error {
			go leakedByHandler(never)
			return nil
		})
		if res := f.Invoke([]byte(`{}`)); res.Err != nil {
			t.Fatal(res.Err)
		}
	case "hanging call":
		f := lambdatest.Start(t, func(context.Context) error {
			go callLeftHanging(os.Getenv(hangingEnv))
			return nil
		})
		if res := f.Invoke([]byte(`{}`)); res.Err != nil {
			t.Fatal(res.Err)
		}
	default:
		t.Skip("the child of TestVerifyTestMain")
	}
}

// TestVerifyTestMain: VerifyTestMain passes net/http's keep-alive
// connections of a package-level client to a stand-in that stays up, and
// fails a goroutine a handler leaks, one left in an HTTP call too.
func TestVerifyTestMain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	srv := paramcache.StandIn(0)
	defer srv.Close()
	hanging := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the child's process ends
	}))
	defer hanging.Close()
	child := func(what string) (string, error) {
		args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestVerifyTestMainChild$", "-test.count=1")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), verifyEnv+"="+what, paramcache.EndpointVar+"="+srv.URL, hangingEnv+"="+hanging.URL)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := child("keep-alive"); err != nil {
		t.Errorf("VerifyTestMain failed a package-level client's idle connections: %v\n%s", err, out)
	}
	for what, fn := range map[string]string{"leak": "leakedByHandler", "hanging call": "callLeftHanging"} {
		out, err := child(what)
		if err == nil || !strings.Contains(out, "found unexpected goroutines") || !strings.Contains(out, fn) {
			t.Errorf("VerifyTestMain passed a goroutine a handler leaked (%s): %v\n%s", what, err, out)
		}
	}
}
