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
// It ignores the two goroutines of the default pool that ants, lmigo's
// goroutine pool, starts when it is imported (and keeps that pool: code
// using ants.Submit still works), with opts on top. A runtime left running
// still shows, by its slots' goroutines.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	goleak.VerifyTestMain(m, append(ignoreRuntime(), opts...)...)
}

// ignoreRuntime matches the default pool's goroutines by their functions:
// goleak cannot name one pool.
func ignoreRuntime() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	}
}
