package lambdatest_test

import (
	"context"
	"io"
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

// standIns are the stand-ins a child of TestVerifyTestMain starts in
// TestMain, before VerifyTestMain, and keeps up for its life, as a team
// starts a local DynamoDB: one over HTTP/1.1 (paramcache's endpoint), one
// over HTTP/2, and one that never answers.
var standIns struct {
	h2      *httptest.Server
	hanging *httptest.Server
}

// startStandIns starts them, in a child of TestVerifyTestMain but the
// one whose stand-in is its parent's.
func startStandIns() {
	switch os.Getenv(verifyEnv) {
	case "", "keep-alive":
		return
	}
	_ = os.Setenv(paramcache.EndpointVar, paramcache.StandIn(0).URL)
	standIns.h2 = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	standIns.h2.EnableHTTP2 = true
	standIns.h2.StartTLS()
	standIns.hanging = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the child's process ends
	}))
}

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
	var handler any
	switch os.Getenv(verifyEnv) {
	case "keep-alive":
		// paramcache's package-level client keeps its connection to the
		// stand-in, which the parent keeps up.
		f := lambdatest.Start(t, paramcache.Handle)
		if res := f.Invoke(paramcache.Event()); res.Err != nil || !strings.Contains(string(res.Payload), `"statusCode":200`) {
			t.Fatalf("paramcache: %s, %v", res.Payload, res.Err)
		}
		return
	case "stand-ins":
		// The stand-ins TestMain started keep the server ends of the
		// clients' connections.
		f := lambdatest.Start(t, paramcache.Handle)
		if res := f.Invoke(paramcache.Event()); res.Err != nil || !strings.Contains(string(res.Payload), `"statusCode":200`) {
			t.Fatalf("paramcache: %s, %v", res.Payload, res.Err)
		}
		client := standIns.h2.Client() // kept, as a package-level client is
		f = lambdatest.Start(t, func(ctx context.Context) (string, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, standIns.h2.URL, http.NoBody)
			resp, err := client.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp.Proto + " " + string(b), err
		})
		if res := f.Invoke([]byte(`{}`)); res.Err != nil || string(res.Payload) != `"HTTP/2.0 ok"` {
			t.Fatalf("the HTTP/2 stand-in: %s, %v", res.Payload, res.Err)
		}
		return
	case "leak":
		never := make(chan struct{})
		handler = func(context.Context) error {
			go leakedByHandler(never)
			return nil
		}
	case "hanging call":
		handler = func(context.Context) error {
			go callLeftHanging(standIns.hanging.URL)
			return nil
		}
	case "server":
		handler = func(context.Context) error {
			srv := httptest.NewServer(http.NotFoundHandler()) // never closed
			callLeftHanging(srv.URL)                          // its connection kept alive
			return nil
		}
	default:
		t.Skip("the child of TestVerifyTestMain")
	}
	f := lambdatest.Start(t, handler)
	if res := f.Invoke([]byte(`{}`)); res.Err != nil {
		t.Fatal(res.Err)
	}
}

// TestVerifyTestMain: VerifyTestMain passes net/http's keep-alive
// connections of a package-level client to a stand-in that stays up, and
// the stand-ins TestMain started, with the server ends of their
// connections; it fails a goroutine a handler leaks, one left in an HTTP
// call, and a server a handler leaves running.
func TestVerifyTestMain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	srv := paramcache.StandIn(0)
	defer srv.Close()
	child := func(what string) (string, error) {
		args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestVerifyTestMainChild$", "-test.count=1")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), verifyEnv+"="+what)
		if what == "keep-alive" {
			cmd.Env = append(cmd.Env, paramcache.EndpointVar+"="+srv.URL)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, what := range []string{"keep-alive", "stand-ins"} {
		if out, err := child(what); err != nil {
			t.Errorf("VerifyTestMain failed what is no test's leak (%s): %v\n%s", what, err, out)
		}
	}
	for what, fn := range map[string]string{
		"leak":         "lambdatest_test.leakedByHandler",
		"hanging call": "lambdatest_test.callLeftHanging",
		"server":       "net/http/httptest.(*Server).goServe",
	} {
		out, err := child(what)
		if err == nil || !strings.Contains(out, "found unexpected goroutines") || !strings.Contains(out, fn) {
			t.Errorf("VerifyTestMain passed a goroutine a handler leaked (%s): %v\n%s", what, err, out)
		}
	}
}
