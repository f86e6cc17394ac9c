package lambdatest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/lmigo/lmigo/concurrent/internal/leftover"
)

// VerifyTestMain is goleak.VerifyTestMain for the test package of a
// function served by lmigo: it runs the tests, then fails them if a
// goroutine they started is still running.
//
//	func TestMain(m *testing.M) {
//		srv := standIn() // a stand-in that stays up, started before the tests
//		os.Setenv("ENDPOINT", srv.URL)
//		lambdatest.VerifyTestMain(m)
//	}
//
// It passes, with opts on top:
//   - every goroutine already running when it is called: what TestMain
//     started before the tests (a stand-in's httptest.Server, a local
//     DynamoDB's client) and package initialisers, the default pool that
//     ants, lmigo's goroutine pool, starts at import among them;
//   - the two goroutines of that pool by name too (code using
//     ants.Submit still works);
//   - net/http's goroutines of a connection, at both of its ends: the
//     client's reader and writer (net/http.(*persistConn).readLoop and
//     writeLoop, net/http.(*http2ClientConn).readLoop, and
//     golang.org/x/net/http2.(*ClientConn).readLoop), which a
//     package-level HTTP or SDK client keeps for its idle keep-alive
//     connections, and the server's (net/http.(*conn).serve,
//     net/http.(*http2serverConn).readFrames), which a stand-in keeps for
//     them. They are net/http's by design, not the test's leak.
//
// A goroutine a handler leaks still fails, an HTTP call it leaves hanging
// too (its own goroutine waits in the client), and so does a server it
// leaves running (by its accept loop, net/http.(*Server).Serve), and a
// runtime left running (by its slots' goroutines).
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	goleak.VerifyTestMain(m, append(ignoreRuntime(), opts...)...)
}

// ignoreRuntime matches those goroutines: the running ones by their IDs,
// the others by their functions, as goleak cannot name one pool or one
// client.
func ignoreRuntime() []goleak.Option {
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		// A connection's goroutines, HTTP/1.1 and HTTP/2, client and
		// server: net/http's own, never a handler's. The client's are
		// those the runtime's look for leftovers passes too.
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*http2serverConn).readFrames"),
	}
	for _, f := range leftover.PoolFuncs {
		opts = append(opts, goleak.IgnoreAnyFunction(f))
	}
	return opts
}
