package lambdatest

import (
	"testing"

	"go.uber.org/goleak"
)

// VerifyTestMain is goleak.VerifyTestMain for the test package of a
// function served by lmigo: it runs the tests, then fails them if a
// goroutine they started is still running.
//
//	func TestMain(m *testing.M) {
//		lambdatest.VerifyTestMain(m)
//	}
//
// It passes, with opts on top:
//   - the two goroutines of the default pool that ants, lmigo's goroutine
//     pool, starts when it is imported (and keeps that pool: code using
//     ants.Submit still works);
//   - net/http's keep-alive connections: a package-level HTTP or SDK
//     client keeps its idle connections to a stand-in that stays up
//     (DynamoDB Local, a parameter store), each in goroutines of net/http's
//     transport. They are the client's by design, not the test's leak.
//
// A goroutine a handler leaks still fails, an HTTP call it leaves hanging
// too (its own goroutine waits in the client), and so does a runtime left
// running, by its slots' goroutines.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	goleak.VerifyTestMain(m, append(ignoreRuntime(), opts...)...)
}

// ignoreRuntime matches those goroutines by their functions: goleak cannot
// name one pool or one client.
func ignoreRuntime() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		// A connection's reader and writer, HTTP/1.1 and HTTP/2: the
		// transport's own goroutines, never a handler's.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
	}
}
