package concurrent

// aws-lambda-go's own test cases, run through both runtimes.
//
// Each case of awsCases (scenario_awscompat_cases_test.go) re-creates a
// case of aws-lambda-go v1.55.1's tests that concerns what a user sees: the
// handler table (handler_test.go), the invoke loop (invoke_loop_test.go,
// invoke_loop_gte_go122_test.go), entry (entry_test.go,
// entry_generic_test.go), panics (panic_test.go), SIGTERM
// (sigterm_test.go), and the options. It runs twice, in this test binary
// re-executed as a bootstrap: once under aws-lambda-go's
// lambda.StartWithOptions (or the entry the case names), once under
// StartWithOptions, each against a fresh fake Runtime API (rapitest) with
// the same invocations. What each side saw is compared: the answers
// (body, content type, response mode, error type header, error document,
// X-Ray cause), whether init ended in an error, whether the process
// serves on after the case, what it does on SIGTERM, the extensions
// registered, and what the handler printed. The two are identical, or
// differ only for one of awsReasons, each a difference the docs state
// (docs/aws-lambda-go.md, "What differs"); a reason applies only
// where its exact difference is found, and makes the two sides equal
// there. A case whose difference no reason explains fails the test.
//
// The aws-lambda-go side is also held to what aws-lambda-go's own test
// expects (awsCase.want), so that a case re-created wrong fails too.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// awsChildEnv selects, in a re-executed test binary, the runtime and the
// case it is the bootstrap of: "aws/NAME" or "lmigo/NAME".
const awsChildEnv = "LMIGO_AWSCOMPAT_CHILD"

// The reasons two runtimes may differ, each stated in the docs.
const (
	reasonErrorTypeHeader = "error type header"
	reasonGoesOn          = "an invocation never ends the process"
	reasonPanicStack      = "panic stack"
	reasonInvalidHandler  = "invalid handler fails init"
	reasonInvalidHeaders  = "unparsable invocation headers"
	reasonStreamed        = "readers are streamed"
	reasonContentType     = "lambda.Handler's content type"
	reasonSIGTERM         = "SIGTERM drains and exits"
	reasonCauseHeaderSafe = "X-Ray cause always a valid header"
	reasonErrorDocCut     = "error document cut to 1 MiB"
)

// acLinePrefix marks the lines the cases' programs print.
const acLinePrefix = "compat: "

// awsReasons: every difference by design, once, with what the docs say.
//
//	reason                             lmigo                                         aws-lambda-go v1.55.1
//	error type header                  Lambda-Runtime-Function-Error-Type on every   no such header: the Runtime API reads
//	                                   /error (the document's errorType)             Runtime.Unknown
//	an invocation never ends the       the process serves on                         after a panic, or an error with
//	process                                                                          ShouldExit, the process exits (1)
//	panic stack                        begins at the function that panicked          begins in aws-lambda-go's recover;
//	                                                                                 the runtime's own frames differ
//	invalid handler fails init         /runtime/init/error, exit 1                   every invocation fails with the
//	                                                                                 validation error
//	unparsable invocation headers      Runtime.InvalidDeadline,                      errorString with the parser's message
//	                                   Runtime.InvalidClientContext,
//	                                   Runtime.InvalidCognitoIdentity
//	readers are streamed               Response-Mode: streaming                      the same chunked body, no mode
//	lambda.Handler's content type      its ContentType() is sent                     application/octet-stream
//	SIGTERM drains and exits           drain, callbacks, exit 0; a goroutine of      callbacks at once, serves on until
//	                                   the program that the signal woke may not      SIGKILL (killed without the option)
//	                                   run before the exit
//	X-Ray cause always a valid header  a DEL byte escaped; over 1 MiB cut to 64 KiB  the post fails and the process exits;
//	                                                                                 over 1 MiB none
//	error document cut to 1 MiB        cut to fit what the Runtime API reads         refused (413), the process exits
var awsReasons = []struct {
	name  string
	apply func(c *awsCase, aws, lm *awsRun) bool
}{
	{reasonErrorTypeHeader, sameErrorTypeHeader},
	{reasonGoesOn, sameGoesOn},
	{reasonPanicStack, samePanicStack},
	{reasonInvalidHandler, sameInvalidHandler},
	{reasonInvalidHeaders, sameInvalidHeaders},
	{reasonStreamed, sameStreamed},
	{reasonContentType, sameContentType},
	{reasonSIGTERM, sameSIGTERM},
	{reasonCauseHeaderSafe, sameCauseHeaderSafe},
	{reasonErrorDocCut, sameErrorDocCut},
}

// awsCase is one case of aws-lambda-go's tests, re-created.
type awsCase struct {
	name string
	// from names the aws-lambda-go test it re-creates, or the source it
	// probes, or this package's handler table.
	from string
	// handler makes the handler, opts its options (in the bootstrap).
	handler func() any
	opts    func() []lambda.Option
	// start, when set, starts the runtime instead of StartWithOptions:
	// rt is "aws" or "lmigo".
	start func(rt string, handler any, opts []lambda.Option)
	n     int               // AWS_LAMBDA_MAX_CONCURRENCY; 0 means 1
	env   map[string]string // more environment; "" removes a variable
	reqs  []rapitest.Request
	// parallel: the invocations are sent at once (n > 1).
	parallel bool
	// sigterm: SIGTERM after the invocations, if the process registered
	// an extension (as Lambda sends it); hookLines is how many lines the
	// program prints on SIGTERM.
	sigterm   bool
	hookLines int
	// lines is how many lines the handlers print in all, some of them
	// maybe after their answer (a streamed reader's Close: lmigo closes it
	// once the stream is posted, its next poll queued behind it).
	lines int
	// want, per invocation, is what aws-lambda-go's test expects: the
	// body, or "error: " and a part of the error document.
	want []string
	// contentType is the ContentType() of a lambda.Handler that has one.
	contentType string
}

// awsAnswer is how one invocation ended.
type awsAnswer struct {
	RequestID    string // when the case chose it
	Body         string
	ContentType  string
	ResponseMode string
	ErrType      string // Lambda-Runtime-Function-Error-Type, or the platform's
	ErrDoc       string
	Cause        string
	Trailer      bool
	None         string // not answered: why
}

// awsRun is what one runtime did in a case.
type awsRun struct {
	Init       string // "polled", or how the process ended before it did
	InitError  string // /runtime/init/error: type and document
	Answers    []awsAnswer
	After      string // after the invocations: "serves" or how it ended
	SIGTERM    string // after SIGTERM: "serves" or how it ended
	Extensions int64
	TooLarge   int64    // answers refused as too large (413)
	Output     []string // what the handler printed, in order
	stderr     string
}

// TestAWSCompatChild is not a test of its own: re-executed with
// awsChildEnv set, it is the bootstrap of one case.
func TestAWSCompatChild(t *testing.T) {
	spec := os.Getenv(awsChildEnv)
	if spec == "" {
		t.Skip("runs only as the bootstrap of TestAWSCompat")
	}
	rt, name, _ := strings.Cut(spec, "/")
	for _, c := range awsCases() {
		if c.name != name {
			continue
		}
		var opts []lambda.Option
		if c.opts != nil {
			opts = c.opts()
		}
		h := c.handler()
		switch {
		case c.start != nil:
			c.start(rt, h, opts)
		case rt == "aws":
			lambda.StartWithOptions(h, opts...)
		default:
			StartWithOptions(h, opts...)
		}
		t.Fatal("the runtime returned")
	}
	t.Fatalf("no case %q", name)
}

// TestAWSCompat runs every case through both runtimes and compares them.
func TestAWSCompat(t *testing.T) {
	if os.Getenv(awsChildEnv) != "" {
		t.Skip("in a bootstrap")
	}
	if testing.Short() {
		t.Skip("starts two processes per case")
	}
	cases := awsCases()
	names := map[string]bool{}
	// The tally, by where the cases come from.
	type tally struct {
		ran, identical int
		byReason       map[string]int
	}
	var mu sync.Mutex
	tallies := map[string]*tally{}
	sem := make(chan struct{}, 4)
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			if names[c.name] {
				t.Fatalf("two cases named %q", c.name)
			}
			names[c.name] = true
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				aws := runAWSCase(t, &c, "aws")
				checkAWSWant(t, &c, aws)
				lm := runAWSCase(t, &c, "lmigo")
				reasons, err := compareAWSRuns(&c, aws, lm)
				if err != nil {
					t.Fatalf("%v\naws-lambda-go stderr:\n%s\nlmigo stderr:\n%s", err, clipLog(aws.stderr), clipLog(lm.stderr))
				}
				mu.Lock()
				defer mu.Unlock()
				for _, g := range []string{"all", c.origin()} {
					if tallies[g] == nil {
						tallies[g] = &tally{byReason: map[string]int{}}
					}
					tl := tallies[g]
					tl.ran++
					if len(reasons) == 0 {
						tl.identical++
					}
					for _, r := range reasons {
						tl.byReason[r]++
					}
				}
				t.Logf("from %s: %s", c.from, strings.Join(append([]string{"identical"}, reasons...)[min(len(reasons), 1):], ", "))
			})
		}
	})
	if t.Failed() {
		return
	}
	for _, g := range []string{originTests, originSource, originTable, "all"} {
		tl := tallies[g]
		if tl == nil {
			continue
		}
		var by []string
		for _, r := range awsReasons {
			if n := tl.byReason[r.name]; n > 0 {
				by = append(by, fmt.Sprintf("%s %d", r.name, n))
			}
		}
		t.Logf("%s: %d cases, %d identical, %d different by design (%s), 0 different otherwise",
			g, tl.ran, tl.identical, tl.ran-tl.identical, strings.Join(by, ", "))
	}
}

// Where a case comes from.
const (
	originTests  = "aws-lambda-go's tests"
	originSource = "aws-lambda-go's source"
	originTable  = "this package's handler table"
)

func (c *awsCase) origin() string {
	switch {
	case strings.HasPrefix(c.from, "handler_test.go"):
		return originTable
	case strings.Contains(c.from, "_test.go"):
		return originTests
	}
	return originSource
}

func clipLog(s string) string {
	if len(s) > 4000 {
		return s[:2000] + "\n...\n" + s[len(s)-2000:]
	}
	return s
}

// runAWSCase runs c under runtime rt ("aws" or "lmigo") in a process of
// its own and reports what it did.
func runAWSCase(t *testing.T, c *awsCase, rt string) *awsRun {
	t.Helper()
	n := max(c.n, 1)
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: n, Queue: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	env := map[string]string{
		awsChildEnv:                  rt + "/" + c.name,
		"AWS_LAMBDA_RUNTIME_API":     api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY": fmt.Sprint(n),
		"GORACE":                     "atexit_sleep_ms=0",
	}
	for k, v := range c.env {
		env[k] = v
	}
	args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestAWSCompatChild$", "-test.count=1")
	cmd := exec.Command(args[0], args[1:]...)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "AWS_") && !strings.HasPrefix(k, "LMIGO_") && !strings.HasPrefix(k, "_X_AMZN") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	stdout, stderr := startChild(t, cmd)
	run := &awsRun{}
	var outMu sync.Mutex
	exited := make(chan struct{})
	var exitErr error
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), acLinePrefix); ok {
				outMu.Lock()
				run.Output = append(run.Output, line)
				outMu.Unlock()
			}
		}
		exitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
		run.stderr = stderr.String()
	}()
	ended := func() string {
		if exitErr == nil {
			return "exit 0"
		}
		var ee *exec.ExitError
		if errors.As(exitErr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return "killed by " + ws.Signal().String()
			}
			return fmt.Sprintf("exit %d", ee.ExitCode())
		}
		return exitErr.Error()
	}
	// until waits for cond or the process's end; false when it ended.
	until := func(cond func() bool) bool {
		for {
			if cond() {
				return true
			}
			select {
			case <-exited:
				return cond()
			case <-ctx.Done():
				t.Fatalf("%s: test deadline\n%s", rt, stderr.String())
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
	// Invocations end when the process does: none is handed out after.
	invCtx, invCancel := context.WithCancel(ctx)
	defer invCancel()
	go func() {
		select {
		case <-exited:
			invCancel()
		case <-invCtx.Done():
		}
	}()
	invoke := func(req rapitest.Request) awsAnswer {
		r, err := api.Invoke(invCtx, req)
		// Only a request ID the case chose is the same on both sides.
		a := awsAnswer{RequestID: req.Headers["Lambda-Runtime-Aws-Request-Id"]}
		if err != nil {
			a.None = "not answered: the process ended"
			if ctx.Err() != nil {
				t.Errorf("%s: test deadline\n%s", rt, stderr.String()) // on a goroutine of its own
			}
			return a
		}
		a.Body, a.ContentType, a.ResponseMode = string(r.Body), r.ContentType, r.ResponseMode
		if r.Err != nil {
			a.ErrType, a.ErrDoc, a.Cause, a.Trailer = r.Err.Type, string(r.Err.Body), string(r.Err.Cause), r.Err.Trailer
		}
		return a
	}

	if !until(func() bool { return api.Stats().PendingPolls > 0 }) {
		run.Init = ended()
		if typ, body, ok := api.InitError(); ok {
			run.InitError = typ + " " + string(body)
		}
		return run
	}
	run.Init = "polled"
	if c.parallel {
		run.Answers = make([]awsAnswer, len(c.reqs))
		var wg sync.WaitGroup
		for i, req := range c.reqs {
			wg.Go(func() { run.Answers[i] = invoke(req) })
		}
		wg.Wait()
		sort.Slice(run.Answers, func(i, j int) bool { return run.Answers[i].RequestID < run.Answers[j].RequestID })
	} else {
		for _, req := range c.reqs {
			run.Answers = append(run.Answers, invoke(req))
		}
	}
	run.After = "serves"
	if !until(func() bool { st := api.Stats(); return st.Polls >= st.Invocations+int64(n) }) {
		run.After = ended()
	}
	until(func() bool { outMu.Lock(); defer outMu.Unlock(); return len(run.Output) >= c.lines })
	run.Extensions, run.TooLarge = api.Stats().Extensions, api.Stats().TooLarge
	// Lambda sends SIGTERM only to a process that registered an extension.
	if c.sigterm && run.After == "serves" && run.Extensions > 0 {
		outMu.Lock()
		printed := len(run.Output)
		outMu.Unlock()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		run.SIGTERM = "serves"
		if c.hookLines == 0 {
			<-exited
			run.SIGTERM = ended()
		} else {
			// Once the callbacks have printed, the runtime has had the
			// signal: one more invocation, and a poll after it, tell
			// serving on from ending.
			until(func() bool { outMu.Lock(); defer outMu.Unlock(); return len(run.Output) >= printed+c.hookLines })
			probe := invoke(rapitest.Request{Payload: []byte(`{}`)})
			if probe.None != "" || !until(func() bool { st := api.Stats(); return st.Polls >= st.Invocations+int64(n) }) {
				<-exited
				run.SIGTERM = ended()
			}
		}
		outMu.Lock()
		slices.Sort(run.Output[printed:]) // printed by goroutines of their own
		outMu.Unlock()
	}
	outMu.Lock()
	run.Output = slices.Clone(run.Output)
	outMu.Unlock()
	return run
}

// checkAWSWant holds the aws-lambda-go side to what aws-lambda-go's own
// test expects.
func checkAWSWant(t *testing.T, c *awsCase, aws *awsRun) {
	t.Helper()
	if len(c.want) == 0 {
		return
	}
	if len(aws.Answers) < len(c.want) {
		t.Fatalf("aws-lambda-go answered %d invocations, its test expects %d: %+v\n%s", len(aws.Answers), len(c.want), aws, clipLog(aws.stderr))
	}
	for i, w := range c.want {
		a := aws.Answers[i]
		if part, ok := strings.CutPrefix(w, "error: "); ok {
			if a.ErrDoc == "" || !strings.Contains(a.ErrDoc, part) {
				t.Fatalf("aws-lambda-go's answer %d: %+v, its test expects an error with %q", i, a, part)
			}
		} else if doc, ok := strings.CutPrefix(w, "json: "); ok {
			var x, y any
			if a.ErrDoc != "" || json.Unmarshal([]byte(a.Body), &x) != nil || json.Unmarshal([]byte(doc), &y) != nil || !reflect.DeepEqual(x, y) {
				t.Fatalf("aws-lambda-go's answer %d: %+v, its test expects %s", i, a, doc)
			}
		} else if a.ErrDoc != "" || a.Body != w {
			t.Fatalf("aws-lambda-go's answer %d: %+v, its test expects %q", i, a, w)
		}
	}
}

// compareAWSRuns compares the two runs, after the reasons that apply, and
// returns those reasons.
func compareAWSRuns(c *awsCase, aws, lm *awsRun) ([]string, error) {
	a, l := *aws, *lm
	a.Answers, l.Answers = slices.Clone(a.Answers), slices.Clone(l.Answers)
	a.stderr, l.stderr = "", ""
	var reasons []string
	for _, r := range awsReasons {
		if r.apply(c, &a, &l) {
			reasons = append(reasons, r.name)
		}
	}
	if !reflect.DeepEqual(a, l) {
		return reasons, fmt.Errorf("different otherwise (after %v):\n%s", reasons, diffAWSRuns(&a, &l))
	}
	return reasons, nil
}

func diffAWSRuns(a, l *awsRun) string {
	var b strings.Builder
	av, lv := reflect.ValueOf(*a), reflect.ValueOf(*l)
	for i := range av.NumField() {
		name := av.Type().Field(i).Name
		if name == "Answers" || !av.Type().Field(i).IsExported() {
			continue
		}
		if x, y := av.Field(i).Interface(), lv.Field(i).Interface(); !reflect.DeepEqual(x, y) {
			fmt.Fprintf(&b, "%s:\n  aws-lambda-go %q\n  lmigo         %q\n", name, x, y)
		}
	}
	if len(a.Answers) != len(l.Answers) {
		fmt.Fprintf(&b, "answers: aws-lambda-go %d, lmigo %d\n", len(a.Answers), len(l.Answers))
	}
	for i := range min(len(a.Answers), len(l.Answers)) {
		if a.Answers[i] != l.Answers[i] {
			fmt.Fprintf(&b, "answer %d:\n  aws-lambda-go %+v\n  lmigo         %+v\n", i, a.Answers[i], l.Answers[i])
		}
	}
	return b.String()
}

// errorDoc decodes an error document; ok is false for anything else.
func errorDoc(s string) (doc messages.InvokeResponse_Error, ok bool) {
	return doc, s != "" && json.Unmarshal([]byte(s), &doc) == nil
}

// eachAnswer applies f to the answers the two runs have at the same
// index, and reports whether f did for any.
func eachAnswer(aws, lm *awsRun, f func(a, l *awsAnswer) bool) bool {
	applied := false
	for i := range min(len(aws.Answers), len(lm.Answers)) {
		if f(&aws.Answers[i], &lm.Answers[i]) {
			applied = true
		}
	}
	return applied
}

// sameErrorTypeHeader: lmigo sends the document's errorType as
// Lambda-Runtime-Function-Error-Type (a type no header can carry as
// Function.InvalidErrorType); aws-lambda-go sends none.
func sameErrorTypeHeader(_ *awsCase, aws, lm *awsRun) bool {
	return eachAnswer(aws, lm, func(a, l *awsAnswer) bool {
		doc, ok := errorDoc(l.ErrDoc)
		if a.ErrDoc == "" || a.ErrType != "" || a.Trailer || l.Trailer || !ok || l.ErrType != headerErrorType(doc.Type) || l.ErrType == "" {
			return false
		}
		l.ErrType = ""
		return true
	})
}

// sameGoesOn: after a panic, or an error returned as a
// messages.InvokeResponse_Error with ShouldExit set, aws-lambda-go's
// process exits with status 1 once it has posted the error; lmigo's
// serves on.
func sameGoesOn(_ *awsCase, aws, lm *awsRun) bool {
	last := -1 // the last invocation aws-lambda-go answered
	for i, a := range aws.Answers {
		if a.None == "" {
			last = i
		}
	}
	for i := last + 1; i < len(aws.Answers); i++ {
		if aws.Answers[i].None == "" {
			return false
		}
	}
	if last < 0 || aws.Answers[last].ErrDoc == "" || aws.After != "exit 1" || lm.After != "serves" {
		return false
	}
	afterExit(aws, lm)
	return true
}

// afterExit: aws-lambda-go's process ended where lmigo's serves on; the
// invocations after the end went unanswered there.
func afterExit(aws, lm *awsRun) {
	if aws.After != "exit 1" || lm.After != "serves" {
		return
	}
	lm.After = aws.After
	for i := range min(len(aws.Answers), len(lm.Answers)) {
		if aws.Answers[i].None != "" {
			lm.Answers[i] = aws.Answers[i]
		}
	}
}

// compatFrames keeps the frames of scenario_awscompat_cases_test.go, where the
// handlers are: the panicking function and the handler that called it.
func compatFrames(fs []*messages.InvokeResponse_Error_StackFrame) []*messages.InvokeResponse_Error_StackFrame {
	var out []*messages.InvokeResponse_Error_StackFrame
	for _, f := range fs {
		if strings.HasSuffix(f.Path, "/scenario_awscompat_cases_test.go") {
			out = append(out, f)
		}
	}
	return out
}

// samePanicStack: both stacks hold the same frames of the handler's own
// code; aws-lambda-go's begin in its recover, lmigo's at the function that
// panicked, and the runtimes' own frames differ. The document and the
// cause are compared with the handler's frames only.
func samePanicStack(_ *awsCase, aws, lm *awsRun) bool {
	return eachAnswer(aws, lm, func(a, l *awsAnswer) bool {
		ad, ok1 := errorDoc(a.ErrDoc)
		ld, ok2 := errorDoc(l.ErrDoc)
		if !ok1 || !ok2 || ad.StackTrace == nil || ld.StackTrace == nil || reflect.DeepEqual(ad.StackTrace, ld.StackTrace) {
			return false
		}
		// lmigo's stack begins at the function that panicked, the
		// handler's; aws-lambda-go's in its own recover.
		mine := compatFrames(ld.StackTrace)
		if len(mine) == 0 || *ld.StackTrace[0] != *mine[0] || *ad.StackTrace[0] == *mine[0] ||
			!reflect.DeepEqual(compatFrames(ad.StackTrace), mine) {
			return false
		}
		for _, x := range []*awsAnswer{a, l} {
			doc, _ := errorDoc(x.ErrDoc)
			doc.StackTrace = compatFrames(doc.StackTrace)
			b, _ := json.Marshal(doc)
			x.ErrDoc = string(b)
			if x.Cause != "" {
				var cause xrayDoc
				if json.Unmarshal([]byte(x.Cause), &cause) == nil && len(cause.Exceptions) == 1 {
					cause.Exceptions[0].Stack = doc.StackTrace
					cause.Paths = nil
					b, _ := json.Marshal(cause)
					x.Cause = string(b)
				}
			}
		}
		return true
	})
}

// sameInvalidHandler: lmigo refuses an invalid handler at init (posted to
// /runtime/init/error as Runtime.InvalidHandler, exit 1); aws-lambda-go
// answers every invocation with the validation error.
func sameInvalidHandler(_ *awsCase, aws, lm *awsRun) bool {
	if aws.Init != "polled" || lm.Init != "exit 1" || !strings.HasPrefix(lm.InitError, errTypeInvalidHandler+" ") || len(aws.Answers) == 0 {
		return false
	}
	initDoc, ok := errorDoc(strings.TrimPrefix(lm.InitError, errTypeInvalidHandler+" "))
	if !ok {
		return false
	}
	// The same refusal, in words of each runtime's own ("handler takes
	// two arguments, but the first is not Context. got interface" and
	// "... not context.Context: concurrent.acValuer").
	for _, a := range aws.Answers {
		doc, ok := errorDoc(a.ErrDoc)
		if !ok || doc.Type != "errorString" || !strings.HasPrefix(doc.Message, "handler") || !strings.Contains(initDoc.Message, "handler") {
			return false
		}
	}
	*lm = *aws
	return true
}

// sameInvalidHeaders: an invocation whose deadline, client context or
// Cognito identity does not parse: lmigo answers it with
// Runtime.InvalidDeadline, Runtime.InvalidClientContext or
// Runtime.InvalidCognitoIdentity, aws-lambda-go with errorString and the
// parser's message.
func sameInvalidHeaders(_ *awsCase, aws, lm *awsRun) bool {
	return eachAnswer(aws, lm, func(a, l *awsAnswer) bool {
		ad, ok1 := errorDoc(a.ErrDoc)
		ld, ok2 := errorDoc(l.ErrDoc)
		prefixes := map[string]string{
			errTypeInvalidDeadline:        "failed to parse deadline: ",
			errTypeInvalidClientContext:   "failed to unmarshal client context json: ",
			errTypeInvalidCognitoIdentity: "failed to unmarshal cognito identity json: ",
		}
		p, known := prefixes[ld.Type]
		if !ok1 || !ok2 || !known || ad.Type != "errorString" || !strings.HasPrefix(ad.Message, p) {
			return false
		}
		l.ErrType, l.ErrDoc, l.Cause = a.ErrType, a.ErrDoc, a.Cause
		return true
	})
}

// sameStreamed: lmigo streams a reader result with
// Lambda-Runtime-Function-Response-Mode: streaming; aws-lambda-go posts
// the same bytes chunked, without the header.
func sameStreamed(_ *awsCase, aws, lm *awsRun) bool {
	return eachAnswer(aws, lm, func(a, l *awsAnswer) bool {
		if a.ResponseMode != "" || l.ResponseMode != rapitest.ResponseModeStreaming {
			return false
		}
		l.ResponseMode = ""
		return true
	})
}

// sameContentType: lmigo sends a lambda.Handler's ContentType();
// aws-lambda-go sends application/octet-stream.
func sameContentType(c *awsCase, aws, lm *awsRun) bool {
	return eachAnswer(aws, lm, func(a, l *awsAnswer) bool {
		if c.contentType == "" || a.ContentType != bytesContentType || l.ContentType != c.contentType || a.ErrDoc != "" {
			return false
		}
		l.ContentType = a.ContentType
		return true
	})
}

// sameSIGTERM: on SIGTERM lmigo drains, runs the callbacks and exits 0;
// aws-lambda-go runs the callbacks at once and serves on until SIGKILL,
// and without WithEnableSIGTERM is killed by the signal.
func sameSIGTERM(c *awsCase, aws, lm *awsRun) bool {
	if !c.sigterm || lm.SIGTERM != "exit 0" || aws.SIGTERM != "serves" && aws.SIGTERM != "killed by terminated" {
		return false
	}
	lm.SIGTERM = aws.SIGTERM
	// The program's own SIGTERM goroutine races lmigo's exit, which may
	// come first; aws-lambda-go serves on, so that it always prints.
	own := strings.TrimPrefix(acOwnSIGTERMLine, acLinePrefix)
	if !slices.Contains(lm.Output, own) {
		for i := range len(lm.Output) + 1 {
			if slices.Equal(slices.Insert(slices.Clone(lm.Output), i, own), aws.Output) {
				lm.Output = slices.Clone(aws.Output)
				break
			}
		}
	}
	return true
}

// sameCauseHeaderSafe: a DEL byte in an error's message goes in lmigo's
// X-Ray cause escaped; aws-lambda-go's post fails (no header may carry
// it) and its process exits, the error unreported. And a cause of 1 MiB
// or more: lmigo sends it cut, aws-lambda-go none.
func sameCauseHeaderSafe(_ *awsCase, aws, lm *awsRun) bool {
	applied := eachAnswer(aws, lm, func(a, l *awsAnswer) bool {
		ld, ok := errorDoc(l.ErrDoc)
		switch {
		case a.None != "" && ok && strings.ContainsRune(ld.Message, 0x7f) && strings.Contains(l.Cause, `\u007f`):
			*l = *a
			return true
		case a.ErrDoc != "" && a.Cause == "" && len(l.Cause) > 0 && len(l.Cause) <= maxXRayCauseCut && a.ErrDoc == l.ErrDoc:
			l.Cause = ""
			return true
		}
		return false
	})
	if applied {
		afterExit(aws, lm)
	}
	return applied
}

// sameErrorDocCut: an error document over 1 MiB: lmigo cuts it to fit
// (its message marked "..."); aws-lambda-go's is refused (413, the
// invocation left open) and its process exits.
func sameErrorDocCut(_ *awsCase, aws, lm *awsRun) bool {
	if aws.TooLarge == 0 || lm.TooLarge != 0 {
		return false
	}
	applied := eachAnswer(aws, lm, func(a, l *awsAnswer) bool {
		ld, ok := errorDoc(l.ErrDoc)
		if a.None == "" || !ok || len(l.ErrDoc) > maxErrorBody || !strings.HasSuffix(ld.Message, "...") {
			return false
		}
		*l = *a
		return true
	})
	if applied {
		lm.TooLarge = aws.TooLarge
		afterExit(aws, lm)
	}
	return applied
}
