package soak

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/loadtest/show"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// The soak's second phase: every handler form of loadtest/soakbootstrap,
// one process each at N, all at once, each against a fake Runtime API of
// its own that injects faults into its replies. Every invocation carries
// a token of its own, and its answer must carry that token and no other.
// The phase ends with SIGTERM once the handlers of N invocations have
// started (each says so on stdout), which the runtime must still answer:
// it gives them ShutdownTimeout, and they take 100 ms.
//
// An invocation is handed out when the runtime could read its request ID
// (rapitest.Result.Delivered); one whose /next reply a fault cut or reset
// before that is withheld, not lost. Of those handed out, each must be
// answered exactly once: lost (never answered), duplicated (answered
// again), mixed (carrying another invocation's token), wrong (not the
// answer it asked for), without echo or cross-wired all fail the soak.

const pkgSoakForms = "github.com/lmigo/lmigo/loadtest/soakbootstrap"

// soakFormNames are the handler forms, as LMIGO_SOAK_FORM names them.
var soakFormNames = []string{"typed", "rawmessage", "raw", "handler", "stream", "writerto", "http", "httpstream", "wrapped"}

// httpForm reports whether form serves an http.Handler: its event is a
// payload format 2.0 event, its answer an HTTP answer.
func httpForm(form string) bool { return form == "http" || form == "httpstream" || form == "wrapped" }

// streamForm reports whether form streams its answers.
func streamForm(form string) bool {
	return form == "stream" || form == "writerto" || form == "httpstream" || form == "wrapped"
}

// errTypeStreamInterrupted is the runtime's error for a stream whose
// connection ended before the Runtime API answered it: a stream cannot be
// sent again.
const errTypeStreamInterrupted = "Runtime.StreamInterrupted"

// The faults, one per invocation by its index, in a cycle of
// len(soakFaultCycle); "" is none.
const (
	faultNone         = "none"
	faultPost410      = "post-410"        // the answer is taken, the runtime is told 410
	faultPost400      = "post-400"        // ... 400
	faultPost413      = "post-413"        // ... 413
	faultPostReset    = "post-reset"      // ... its connection reset instead of a reply
	faultPostSlow     = "post-slow"       // the reply to the answer comes 20 ms late
	faultPostLostRST  = "post-lost-reset" // the answer read whole, not taken, its connection reset
	faultPostLostFIN  = "post-lost-close" // ... its connection closed
	faultPostStalled  = "post-stalled"    // the answer is taken, its reply never comes: the runtime cuts it
	faultPostHead     = "post-head"       // ... only its reply's status line comes: the runtime cuts it
	faultRepostStall  = "repost-stalled"  // ... its reply never comes, nor that of the answer posted again
	faultPastDeadline = "past-deadline"   // handed out with a deadline already past by the runtime's clock
	faultNextReset    = "next-reset"      // the /next reply reset: withheld
	faultNextCutID    = "next-cut-status" // the /next reply cut in its status line: withheld
	faultNextCutHdr   = "next-cut-header" // cut in the header lines after the request ID
	faultNextCutBdy   = "next-cut-body"   // cut mid-payload
	faultNextSlow     = "next-slow"       // the /next reply comes 20 ms late
	faultSIGTERM      = "sigterm"         // in flight when SIGTERM came
	faultPollReset    = "poll-reset"      // a /next reset before it was registered (by call index)
)

var soakFaultCycle = []string{
	faultPost410, faultNone, faultNextCutHdr, faultPost400, faultNone, faultNextReset, faultPost413,
	faultNone, faultNextCutBdy, faultPostReset, faultNone, faultNextSlow, faultNone, faultNextCutID,
	faultPostSlow, faultNone, faultPostLostRST, faultNone, faultPostLostFIN, faultNone,
	faultPostStalled, faultPastDeadline, faultPostHead, faultNone, faultRepostStall,
}

// soakDos are what the handler is asked to do, by index / len(soakFaultCycle),
// so that every fault meets every outcome.
var soakDos = []string{"ok", "error", "ok", "panic", "ok", "sleep", "ok", "error", "late", "ok", "huge", "ok"}

// soakTailWait bounds the wait for every slot to poll again before the
// SIGTERM tail: a slot whose answer was posted twice, neither reply ever
// coming, is back two stall timeouts (10 s each) after its post, then
// polls on a machine the race detector and nine bootstraps load.
const soakTailWait = 60 * time.Second

// soakPollResetEvery: one GET /next in so many is reset unregistered.
const soakPollResetEvery = 41

// soakToken matches the tokens of every invocation in an answer.
var soakToken = regexp.MustCompile(`tok-[a-z]+-[0-9]+`)

// formReport is the accounting of one handler form.
type formReport struct {
	Form       string
	Sent       int64 // invocations given to the fake
	HandedOut  int64 // of them, delivered to the runtime
	Withheld   int64 // of them, their request ID cut off by a fault
	Once       int64 // handed out and answered once
	Lost       int64 // handed out, never answered
	Duplicated int64 // answers posted again for an answered invocation
	Reposted   int64 // of them, the one post again that a reset after the post allows
	LateWrites int64 // late writes that succeeded where they must fail
	LongestLog int   // the longest line the bootstrap wrote on stderr
	Mixed      int64 // answers carrying another invocation's token
	Wrong      int64 // answers that were not what their invocation asked for
	Unknown    int64 // posts for a request ID never handed out
	NoEcho     int64
	CrossWired int64
	PollResets int64
	ByFault    map[string]int64 // invocations handed out, by fault
	Findings   []soakFinding
	API        rapitest.Stats
	ExitStatus int
	ExitAfter  time.Duration
	Stderr     string // the end of the bootstrap's stderr, when it did not exit cleanly
	Problems   []string
}

// soakFinding is one kind of failure: what, under which fault and outcome,
// how often, and the first request IDs.
type soakFinding struct {
	What, Fault, Do string
	Count           int64
	IDs             []string
}

// soakInv is what the driver knows of one invocation.
type soakInv struct {
	i            int64
	token, fault string
	do           string
}

// formRun is the live state of one form's run.
type formRun struct {
	form string
	api  *rapitest.Server
	rep  *formReport

	mu       sync.Mutex
	byID     map[string]soakInv // request ID -> invocation, once Invoke returned
	notices  []struct{ id, what string }
	findings map[[3]string]*soakFinding
}

// soakFormsPhase runs every form at once for d, then stops each with
// SIGTERM under load.
func soakFormsPhase(ctx context.Context, cfg Config, bin string, d time.Duration, logf func(string, ...any)) []*formReport {
	reps := make([]*formReport, len(soakFormNames))
	var wg sync.WaitGroup
	for k, form := range soakFormNames {
		wg.Go(func() {
			reps[k] = soakForm(ctx, cfg, bin, form, d)
			logf("form %s: %d sent, %d handed out, %d answered once, %d lost", form, reps[k].Sent, reps[k].HandedOut, reps[k].Once, reps[k].Lost)
		})
	}
	wg.Wait()
	return reps
}

// soakForm runs one form.
func soakForm(ctx context.Context, cfg Config, bin, form string, d time.Duration) *formReport {
	rep := &formReport{Form: form, ByFault: map[string]int64{}}
	fr := &formRun{form: form, rep: rep, byID: map[string]soakInv{}, findings: map[[3]string]*soakFinding{}}
	var (
		calls, pollResets atomic.Int64
		quiet             atomic.Bool // no faults by call index during the SIGTERM tail
		lost              sync.Map    // request IDs whose first post was lost
		reposts           sync.Map    // request IDs whose first post was seen (repostStalled)
	)
	api, err := rapitest.New(rapitest.Options{
		MaxConcurrency: cfg.N,
		Queue:          true,
		Timeout:        10 * time.Second,
		Notice: func(id, what string) {
			fr.mu.Lock()
			fr.notices = append(fr.notices, struct{ id, what string }{id, what})
			fr.mu.Unlock()
		},
		Faults: func(_ int, r *http.Request) *rapitest.Fault {
			if r.Method == http.MethodPost {
				if f := repostStalled(r, &reposts); f != nil {
					return f
				}
				return lostPost(r, &lost)
			}
			if !strings.HasSuffix(r.URL.Path, "/invocation/next") || quiet.Load() {
				return nil
			}
			if calls.Add(1)%soakPollResetEvery == 0 {
				pollResets.Add(1)
				return &rapitest.Fault{Reset: true}
			}
			return nil
		},
	})
	if err != nil {
		rep.problem("fake API: %v", err)
		return rep
	}
	fr.api = api
	defer api.Close()

	cmd := exec.Command(bin)
	cmd.Env = []string{
		"AWS_LAMBDA_RUNTIME_API=" + api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY=" + strconv.Itoa(cfg.N),
		"AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_NAME=soak-" + form,
		"AWS_LAMBDA_LOG_LEVEL=ERROR", // the faults are on purpose; failures check the lines' bound
		"LMIGO_SIGTERM=1",
		"LMIGO_SHUTDOWN_TIMEOUT=" + soakShutdown.String(),
		"LMIGO_SOAK_FORM=" + form,
	}
	var stderr tailBuffer
	var lines lineBound
	cmd.Stderr = io.MultiWriter(&stderr, &lines)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		rep.problem("stdout: %v", err)
		return rep
	}
	if err := cmd.Start(); err != nil {
		rep.problem("start: %v", err)
		return rep
	}
	var started, lateAccepted atomic.Int64 // handlers of the SIGTERM tail running; late writes taken
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			switch {
			case bytes.HasPrefix(sc.Bytes(), []byte("started ")):
				started.Add(1)
			case bytes.HasPrefix(sc.Bytes(), []byte("late-accepted ")):
				lateAccepted.Add(1)
			}
		}
		_ = cmd.Wait() // stdout at EOF first
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	err = api.WaitPolls(wctx, cfg.N)
	wcancel()
	if err != nil {
		rep.problem("the bootstrap never polled %d times: %v; stderr: %s", cfg.N, err, stderr.String())
		return rep
	}

	var next atomic.Int64
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range cfg.N {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				i := next.Add(1) - 1
				fault := soakFaultCycle[i%int64(len(soakFaultCycle))]
				do := soakDos[(i/int64(len(soakFaultCycle)))%int64(len(soakDos))]
				if fault == faultPastDeadline && do == "late" {
					do = "ok" // its context is done from the start: a late write is not late
				}
				fr.invoke(ctx, soakInv{i: i, token: fmt.Sprintf("tok-%s-%d", form, i), fault: fault, do: do})
			}
		})
	}
	wg.Wait()

	// The tail: N invocations in flight, then SIGTERM. Every slot polls
	// again first, so that each is handed out at once: one whose answer's
	// reply never came does so once the runtime cut it (rapi's stall
	// timeout, 10 s, after the post), or cut it twice (repostStalled).
	quiet.Store(true)
	wctx, wcancel = context.WithTimeout(ctx, soakTailWait)
	err = api.WaitPolls(wctx, cfg.N)
	wcancel()
	if err != nil {
		rep.problem("not every slot polls again after the load: %v", err)
	}
	before := api.Stats().Invocations
	for range cfg.N {
		i := next.Add(1) - 1
		wg.Go(func() {
			fr.invoke(ctx, soakInv{i: i, token: fmt.Sprintf("tok-%s-%d", form, i), fault: faultSIGTERM, do: "sleep"})
		})
	}
	if !waitUntil(10*time.Second, func() bool { return started.Load() >= int64(cfg.N) }) {
		rep.problem("the SIGTERM tail: %d of %d handed out, %d handlers started",
			api.Stats().Invocations-before, cfg.N, started.Load())
	}
	var exitedOK bool
	rep.ExitAfter, rep.ExitStatus, exitedOK = sigterm(cmd, exited)
	if !exitedOK {
		rep.problem("no exit within %v of SIGTERM", soakExitWait)
	}
	// What the runtime did not answer before it exited is lost: Close ends
	// it now rather than at its deadline.
	api.Close()
	wg.Wait()
	rep.Sent = next.Load()
	rep.PollResets = pollResets.Load()
	rep.LateWrites = lateAccepted.Load()
	rep.LongestLog = lines.longest()
	rep.API = api.Stats()
	if rep.ExitStatus != 0 {
		rep.Stderr = stderr.String()
	}
	fr.finish()
	return rep
}

// invoke sends one invocation and files its outcome.
func (fr *formRun) invoke(ctx context.Context, inv soakInv) {
	sleep := ""
	if inv.do == "sleep" {
		sleep = `,"sleep_ms":20`
		if inv.fault == faultSIGTERM {
			sleep = `,"sleep_ms":100,"announce":true` // still running when SIGTERM comes
		}
	}
	do := inv.do
	if do == "sleep" {
		do = "ok"
	}
	req := rapitest.Request{Payload: fmt.Appendf(nil, `{"token":%q,"do":%q%s}`, inv.token, do, sleep)}
	if httpForm(fr.form) {
		req.Payload = httpEvent(req.Payload)
	}
	n := len(req.Payload)
	switch inv.fault {
	case faultPost410:
		req.PostFault = &rapitest.Fault{Status: http.StatusGone}
	case faultPost400:
		req.PostFault = &rapitest.Fault{Status: http.StatusBadRequest}
	case faultPost413:
		req.PostFault = &rapitest.Fault{Status: http.StatusRequestEntityTooLarge}
	case faultPostReset:
		req.PostFault = &rapitest.Fault{Reset: true}
	case faultPostSlow:
		req.PostFault = &rapitest.Fault{Stall: 20 * time.Millisecond}
	case faultPostStalled:
		// Its slot waits for that reply until the deadline plus
		// LMIGO_OVERRUN_GRACE, and at least rapi's stall timeout (10 s)
		// from the post, then polls anew.
		req.PostFault = &rapitest.Fault{Stall: time.Hour}
	case faultPostHead:
		req.PostFault = &rapitest.Fault{Raw: []byte("HTTP/1.1 202 Accepted\r\n"), Stall: time.Hour}
	case faultRepostStall:
		// repostStalled stalls the answer posted again once the first
		// reply was cut: the slot waits out a second bound.
		req.PostFault = &rapitest.Fault{Stall: time.Hour}
		req.Headers = map[string]string{"Lambda-Runtime-Aws-Request-Id": inv.fault + "-" + inv.token}
	case faultPastDeadline:
		// The fake keeps its own deadline: the runtime must not take the
		// slot back on this one.
		req.Headers = map[string]string{"Lambda-Runtime-Deadline-Ms": strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)}
	case faultPostLostRST, faultPostLostFIN:
		// lostPost ends the first post of this request ID unanswered.
		req.Headers = map[string]string{"Lambda-Runtime-Aws-Request-Id": inv.fault + "-" + inv.token}
	case faultNextReset:
		req.Fault, req.Timeout = &rapitest.Fault{Reset: true}, time.Second
	case faultNextCutID:
		req.Fault, req.Timeout = &rapitest.Fault{Cut: 20}, time.Second
	case faultNextCutHdr:
		// Headers are written sorted: Lambda-Runtime-Trace-Id comes last,
		// after the request ID; cut 10 bytes into its value's end.
		req.Fault = &rapitest.Fault{Cut: -(n + 2 + 10)}
	case faultNextCutBdy:
		req.Fault = &rapitest.Fault{Cut: -(n / 2)}
	case faultNextSlow:
		req.Fault = &rapitest.Fault{Stall: 20 * time.Millisecond}
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := fr.api.Invoke(ictx, req)

	fr.mu.Lock()
	defer fr.mu.Unlock()
	rep := fr.rep
	if r.RequestID != "" {
		fr.byID[r.RequestID] = inv
	}
	if !r.Delivered {
		rep.Withheld++
		if r.Err == nil && err == nil || r.Err != nil && r.Err.Type != rapitest.ErrorTypeTimeout {
			fr.find("answered although withheld", inv, r.RequestID)
		}
		return
	}
	rep.HandedOut++
	rep.ByFault[inv.fault]++
	if err != nil || r.Err != nil && r.Err.Type == rapitest.ErrorTypeTimeout {
		rep.Lost++
		fr.find("lost", inv, r.RequestID)
		return
	}
	rep.Once++
	body := r.Body
	if r.Err != nil {
		body = append(slices.Clip(r.Body), r.Err.Body...)
	}
	for _, tok := range soakToken.FindAll(body, -1) {
		if string(tok) != inv.token {
			rep.Mixed++
			fr.find("mixed (carries "+string(tok)+")", inv, r.RequestID)
			return
		}
	}
	ok := fr.answerOK(inv, r, body) && fr.modeOK(r)
	if !ok {
		rep.Wrong++
		what := "wrong answer"
		if r.Err != nil {
			what += " (error " + r.Err.Type + ")"
		}
		fr.find(what, inv, r.RequestID)
	}
}

// find files one failure; fr.mu is held.
func (fr *formRun) find(what string, inv soakInv, id string) {
	key := [3]string{what, inv.fault, inv.do}
	f := fr.findings[key]
	if f == nil {
		f = &soakFinding{What: what, Fault: inv.fault, Do: inv.do}
		fr.findings[key] = f
	}
	f.Count++
	if len(f.IDs) < 3 {
		if id == "" {
			id = inv.token
		}
		f.IDs = append(f.IDs, id)
	}
}

// finish turns the fake's notices and counts into the report's findings
// and problems.
func (fr *formRun) finish() {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	rep, st := fr.rep, fr.rep.API
	reposted := map[string]bool{}
	for _, n := range fr.notices {
		inv, ok := fr.byID[n.id]
		if !ok {
			inv = soakInv{fault: "?", do: "?"}
		}
		switch n.what {
		case rapitest.NoticeDuplicate:
			if (inv.fault == faultPostReset || inv.fault == faultPostStalled || inv.fault == faultPostHead) && !reposted[n.id] {
				// The answer was taken and its reply reset, or never
				// sent whole and cut: the runtime cannot know, and posts
				// it once more.
				reposted[n.id] = true
				rep.Reposted++
				continue
			}
			rep.Duplicated++
		case rapitest.NoticeUnknown:
			rep.Unknown++
		case rapitest.NoticeNoEcho:
			rep.NoEcho++
		case rapitest.NoticeCrossWired:
			rep.CrossWired++
		default:
			continue // late: the invocation is counted lost already
		}
		fr.find(n.what, inv, n.id)
	}
	for _, f := range fr.findings {
		rep.Findings = append(rep.Findings, *f)
	}
	slices.SortFunc(rep.Findings, func(a, b soakFinding) int {
		return strings.Compare(a.What+a.Fault+a.Do, b.What+b.Fault+b.Do)
	})
	if st.Invocations != rep.HandedOut+rep.Withheld || st.Answered() != rep.HandedOut {
		rep.problem("accounting: %d sent, %d handed out by the fake, %d delivered + %d withheld, %d answered",
			rep.Sent, st.Invocations, rep.HandedOut, rep.Withheld, st.Answered())
	}
	if st.Violations > 0 {
		rep.problem("%d polls over N (max %d outstanding)", st.Violations, st.MaxOutstanding)
	}
	if n := rep.Lost + rep.Duplicated + rep.Mixed + rep.Wrong + rep.Unknown + rep.NoEcho + rep.CrossWired; n > 0 {
		rep.problem("%d lost, %d duplicated, %d mixed, %d wrong, %d unknown, %d without echo, %d cross-wired",
			rep.Lost, rep.Duplicated, rep.Mixed, rep.Wrong, rep.Unknown, rep.NoEcho, rep.CrossWired)
	}
	for _, f := range rep.Findings {
		if f.What != "answered although withheld" {
			continue
		}
		rep.problem("%d invocations withheld by fault %s were answered anyway", f.Count, f.Fault)
	}
	if rep.ExitStatus != 0 {
		rep.problem("exit status %d after SIGTERM; stderr ends: %s", rep.ExitStatus, rep.Stderr)
	}
	if rep.LateWrites > 0 {
		rep.problem("%d late writes succeeded after their invocation ended", rep.LateWrites)
	}
	if rep.LongestLog >= maxLogLine {
		rep.problem("a log line of %d bytes: the emulator's log copy stops at %d", rep.LongestLog, maxLogLine)
	}
}

// answerOK reports whether r is the answer inv asked for; body is its
// response or error body.
func (fr *formRun) answerOK(inv soakInv, r rapitest.Result, body []byte) bool {
	own := bytes.Contains(body, []byte(inv.token))
	failing := inv.do == "error" || inv.do == "panic" || inv.do == "huge"
	switch {
	case inv.fault == faultNextCutHdr || inv.fault == faultNextCutBdy:
		return r.Err != nil // the runtime got half an invocation: an error, never a response
	case (inv.fault == faultPostLostRST || inv.fault == faultPostLostFIN) && streamForm(fr.form) &&
		r.Err != nil && r.Err.Type == errTypeStreamInterrupted:
		return true
	case httpForm(fr.form):
		// Failures are HTTP answers: 500, with the error's text, or
		// lambdahttp's own for a panic.
		status := []byte(`"statusCode":200`)
		if failing {
			status = []byte(`"statusCode":500`)
		}
		return r.Err == nil && bytes.Contains(body, status) && (own || inv.do == "panic" || inv.do == "huge")
	case failing:
		return r.Err != nil && own
	}
	return r.Err == nil && own
}

// modeOK reports whether r, a response, came in the form's response mode.
func (fr *formRun) modeOK(r rapitest.Result) bool {
	return r.Err != nil || (r.ResponseMode == rapitest.ResponseModeStreaming) == streamForm(fr.form)
}

// httpEvent wraps a soak event as the body of a payload format 2.0 event.
func httpEvent(body []byte) []byte {
	return fmt.Appendf(nil, `{"version":"2.0","routeKey":"$default","rawPath":"/soak","rawQueryString":"",`+
		`"headers":{"content-type":"application/json"},"requestContext":{"http":{"method":"POST","path":"/soak",`+
		`"protocol":"HTTP/1.1","sourceIp":"127.0.0.1"},"domainName":"soak.example"},"body":%q,"isBase64Encoded":false}`, body)
}

// lostPost ends unanswered the first post for an invocation whose request
// ID names a post-lost fault, after reading it whole: a Runtime API that
// had the answer and went away without taking it. The runtime must post it
// again.
func lostPost(r *http.Request, lost *sync.Map) *rapitest.Fault {
	for _, f := range []string{faultPostLostRST, faultPostLostFIN} {
		i := strings.Index(r.URL.Path, "/"+f+"-")
		if i < 0 {
			continue
		}
		id := r.URL.Path[i+1:]
		id = id[:strings.IndexByte(id, '/')]
		if _, seen := lost.LoadOrStore(id, true); seen {
			return nil
		}
		return &rapitest.Fault{Reset: f == faultPostLostRST, Drop: f == faultPostLostFIN, ReadBody: true}
	}
	return nil
}

// repostStalled stalls, unserved, the second post for an invocation whose
// request ID names faultRepostStall: the answer the runtime posts again
// once it cut the first one's reply, which never came either.
func repostStalled(r *http.Request, seen *sync.Map) *rapitest.Fault {
	i := strings.Index(r.URL.Path, "/"+faultRepostStall+"-")
	if i < 0 {
		return nil
	}
	id := r.URL.Path[i+1:]
	id = id[:strings.IndexByte(id, '/')]
	if _, again := seen.LoadOrStore(id, true); !again {
		return nil // served: its reply stalls (PostFault)
	}
	return &rapitest.Fault{Drop: true, ReadBody: true, Stall: time.Hour}
}

// maxLogLine is the emulator's log line buffer: a longer line stops its
// copy of the runtime's output.
const maxLogLine = 64 << 10

// lineBound keeps the length of the longest line written to it.
type lineBound struct {
	mu       sync.Mutex
	cur, max int
}

func (l *lineBound) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.cur += len(rest)
			break
		}
		l.max = max(l.max, l.cur+i)
		l.cur = 0
		rest = rest[i+1:]
	}
	l.max = max(l.max, l.cur)
	return len(p), nil
}

func (l *lineBound) longest() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

func (r *formReport) problem(format string, a ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}

// printForms writes the forms phase: one line per form, then what failed.
func printForms(w io.Writer, reps []*formReport) {
	if len(reps) == 0 {
		return
	}
	fmt.Fprintf(w, "  handler forms (faults %s; %s; one /next in %d reset):\n", strings.Join(soakFaultList(), ", "), faultSIGTERM, soakPollResetEvery)
	lines := [][]string{{"    form", "sent", "handed out", "once", "lost", "duplicated", "reposted", "late writes", "longest log", "mixed", "wrong", "no echo", "cross-wired", "withheld", "faults", "exit"}}
	for _, r := range reps {
		lines = append(lines, []string{"    " + r.Form,
			fmt.Sprint(r.Sent), fmt.Sprint(r.HandedOut), fmt.Sprint(r.Once), fmt.Sprint(r.Lost), fmt.Sprint(r.Duplicated),
			fmt.Sprint(r.Reposted), fmt.Sprint(r.LateWrites), fmt.Sprint(r.LongestLog),
			fmt.Sprint(r.Mixed), fmt.Sprint(r.Wrong), fmt.Sprint(r.NoEcho), fmt.Sprint(r.CrossWired), fmt.Sprint(r.Withheld),
			fmt.Sprint(r.API.Faults), fmt.Sprintf("%d in %v", r.ExitStatus, r.ExitAfter.Round(time.Millisecond))})
	}
	show.Aligned(w, lines)
	// One line per form, failure and fault; findings are sorted so.
	for _, r := range reps {
		fs := r.Findings
		for len(fs) > 0 {
			n := 1
			for n < len(fs) && fs[n].What == fs[0].What && fs[n].Fault == fs[0].Fault {
				n++
			}
			var total int64
			var dos []string
			for _, f := range fs[:n] {
				total += f.Count
				dos = append(dos, fmt.Sprintf("%s %d", f.Do, f.Count))
			}
			fmt.Fprintf(w, "    FOUND %s: %s under fault %s: %d (handler asked to: %s; request IDs %s)\n",
				r.Form, fs[0].What, fs[0].Fault, total, strings.Join(dos, ", "), strings.Join(fs[0].IDs, ", "))
			fs = fs[n:]
		}
	}
}

// soakFaultList names the faults of the cycle, once each.
func soakFaultList() []string {
	var l []string
	for _, f := range soakFaultCycle {
		if f != faultNone && !slices.Contains(l, f) {
			l = append(l, f)
		}
	}
	return l
}

// waitUntil polls cond every millisecond for at most d.
func waitUntil(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// tailBuffer keeps the last 8 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 8<<10; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
