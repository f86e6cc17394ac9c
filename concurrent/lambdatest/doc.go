// Package lambdatest tests a Lambda function served by lmigo, as
// net/http/httptest tests an http.Handler: [Start] serves the handler
// through the real runtime (concurrent.New and Run, as a bootstrap runs
// them) against the fake Runtime API of rapi/rapitest at N slots, over
// loopback, and [Function.Invoke] hands it one event and returns what the
// caller would read, with the log lines and metric documents of that
// invocation alone ([Result]).
//
//	var options = []lambda.Option{lambda.WithDisallowUnknownFields(true)} // main passes the same
//
//	func TestHandler(t *testing.T) {
//		f := lambdatest.Start(t, handler, lambdatest.WithRuntime(concurrent.WithLambdaOptions(options...)))
//		res := f.Invoke([]byte(`{"id":1}`))
//		...
//	}
//
// [CheckIsolation] answers the first question of a function on Lambda
// Managed Instances, where N invocations share one process: does one
// invocation's answer, log or metrics depend on the others? It serves the
// events all at once, then each alone, and names the events whose answers
// or lines differ.
//
// # Fresh processes
//
// CheckIsolation serves nothing in the test's own process. It runs the
// test binary again: one child for each round serves all the events at
// once, and one child for each event serves that event alone, twice.
// Each child runs the same test (go test's -run of its name) up to the
// same CheckIsolation call, which there serves the events the parent
// sent, reports back and skips the rest of the test. Package variables,
// a client or router built lazily, a first-invocation flag: each child
// starts them fresh. So each event's alone answer comes from a state no
// other event has touched, and each round served at once meets state no
// invocation has built yet. Under -race, the race detector's reports in
// any child fail the test. The children run at most GOMAXPROCS at a time
// and end before the test's deadline.
//
// Out of reach: state outside the process (a database, a file, a stand-in
// service the handler writes to) is shared by the children as it is by
// invocations. The race detector sees a race only where nothing orders
// the two accesses in that run: invocations that also pass objects
// through a pool (fmt's, a sync.Pool) may be ordered by it, so a run can
// miss a lazily built router's race; each round is a new chance, and
// WithRounds adds rounds. A test must reach its CheckIsolation calls the
// same way on every run: the child serves the parent's events, but
// builds the handler again by the test's own code. TestMain, and what the
// test does before the call, run in every child. A test binary run
// through an emulator (go test -exec) runs its children through the
// command in LMIGO_RIE_EXEC.
//
// # Environment
//
// The runtime reads the process's environment as a bootstrap does, so a
// t.Setenv before Start reaches it (POWERTOOLS_METRICS_NAMESPACE, say),
// with the fake's address, N and AWS_LAMBDA_LOG_FORMAT=JSON on top, and
// the variables Lambda sets on a managed instance where the environment
// has none (AWS_LAMBDA_FUNCTION_NAME, AWS_REGION, ...). Tests that set the
// environment cannot run in parallel (testing forbids it); others can.
//
// # Goroutines
//
// Start stops the runtime and waits for it at t.Cleanup, so nothing it
// started outlives the test. A test package checks that with goleak in one
// line:
//
//	func TestMain(m *testing.M) {
//		lambdatest.VerifyTestMain(m)
//	}
//
// It passes the goroutines that are no test's leak: every goroutine
// already running when it is called (a stand-in TestMain starts before
// it, as a team starts a local DynamoDB with httptest.NewServer, and the
// default pool ants, lmigo's goroutine pool, starts at import), and
// net/http's goroutines of a kept-alive connection at both ends: the
// client's reader and writer, which a package-level HTTP or SDK client
// keeps, and the server's net/http.(*conn).serve (and HTTP/2's
// readFrames), which a stand-in keeps for it. VerifyTestMain names them
// exactly. A goroutine a handler leaks still fails it, one waiting in an
// HTTP call too, and so does a server a handler leaves running (its
// accept loop).
//
// # Output
//
// The lines of concurrent.Logger, concurrent.Slog, concurrent.SlogHandler
// and the runtime's own lines about an invocation go to that invocation's
// Result.Logs, its EMF documents to Result.Metrics, not to stderr and
// stdout. The runtime's lines of no invocation (its start and stop, the
// WARN for an LMIGO_ variable it does not know) are logged to t, which go
// test shows with -v and when the test fails; through CheckIsolation,
// those of the child serving at once, and the warnings and errors of the
// others, once each. Each shows at the test's line that called Start or
// CheckIsolation, as "runtime: " and the JSON line the runtime wrote
// (through CheckIsolation, "(while ...)" after it says which child wrote
// it):
//
//	main_test.go:31: runtime: {"level":"WARN",...,"message":"unknown variable ignored","variable":"LMIGO_SLOT","nearest":"LMIGO_SLOTS"}
//
// A logger given with concurrent.WithLogger writes where it writes.
// Result.Leftover counts the goroutines an invocation left running after
// its answer, read in a goroutine profile begun once the answer came.
//
// Package lambdatest is for tests: the runtime never imports it.
package lambdatest
