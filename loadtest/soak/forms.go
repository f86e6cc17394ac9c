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

// errTypeStreamInterrupted is the runtime's error for a stream whose
// connection ended before the Runtime API answered it: a stream cannot be
// sent again.
const errTypeStreamInterrupted = "Runtime.StreamInterrupted"

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

	// Faults by call index: /next calls, those reset, none in the tail.
	calls, pollResets atomic.Int64
	quiet             atomic.Bool
	lost              sync.Map // request IDs whose first post was lost
	reposts           sync.Map // request IDs whose first post was seen (repostStalled)

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
	api, err := fr.newAPI(cfg.N)
	if err != nil {
		rep.problem("fake API: %v", err)
		return rep
	}
	fr.api = api
	defer api.Close()
	p, err := startForm(bin, form, api, cfg.N)
	if err != nil {
		rep.problem("%v", err)
		return rep
	}
	defer p.kill()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	err = api.WaitPolls(wctx, cfg.N)
	wcancel()
	if err != nil {
		rep.problem("the bootstrap never polled %d times: %v; stderr: %s", cfg.N, err, p.stderr.String())
		return rep
	}
	var next atomic.Int64
	fr.load(ctx, cfg.N, d, &next)
	fr.tail(ctx, cfg.N, p, &next)
	rep.Sent = next.Load()
	rep.PollResets = fr.pollResets.Load()
	rep.LateWrites = p.lateAccepted.Load()
	rep.LongestLog = p.lines.longest()
	rep.API = api.Stats()
	if rep.ExitStatus != 0 {
		rep.Stderr = p.stderr.String()
	}
	fr.finish()
	return rep
}

// newAPI is the form's fake Runtime API at N=n: it files the notices of
// what went wrong, and injects the faults that go by call rather than by
// invocation: a post whose request ID names lostPost's or repostStalled's
// fault, and one /next in soakPollResetEvery, reset, but in the tail.
func (fr *formRun) newAPI(n int) (*rapitest.Server, error) {
	return rapitest.New(rapitest.Options{
		MaxConcurrency: n,
		Queue:          true,
		Timeout:        10 * time.Second,
		Notice: func(id, what string) {
			fr.mu.Lock()
			fr.notices = append(fr.notices, struct{ id, what string }{id, what})
			fr.mu.Unlock()
		},
		Faults: func(_ int, r *http.Request) *rapitest.Fault {
			if r.Method == http.MethodPost {
				if f := repostStalled(r, &fr.reposts); f != nil {
					return f
				}
				return lostPost(r, &fr.lost)
			}
			if !strings.HasSuffix(r.URL.Path, "/invocation/next") || fr.quiet.Load() {
				return nil
			}
			if fr.calls.Add(1)%soakPollResetEvery == 0 {
				fr.pollResets.Add(1)
				return &rapitest.Fault{Reset: true}
			}
			return nil
		},
	})
}

// formProc is one form's bootstrap: its stdout read for what the
// handlers say, its stderr kept.
type formProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once stdout is read and cmd waited for
	stderr tailBuffer
	lines  lineBound
	// Handlers of the SIGTERM tail running; late writes taken.
	started, lateAccepted atomic.Int64
}

// startForm starts bin, serving form, against api at N=n.
func startForm(bin, form string, api *rapitest.Server, n int) (*formProc, error) {
	cmd := exec.Command(bin)
	cmd.Env = []string{
		"AWS_LAMBDA_RUNTIME_API=" + api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY=" + strconv.Itoa(n),
		"AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_NAME=soak-" + form,
		"AWS_LAMBDA_LOG_LEVEL=ERROR", // the faults are on purpose; failures check the lines' bound
		"LMIGO_SIGTERM=1",
		"LMIGO_SHUTDOWN_TIMEOUT=" + soakShutdown.String(),
		"LMIGO_SOAK_FORM=" + form,
	}
	p := &formProc{cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = io.MultiWriter(&p.stderr, &p.lines)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			switch {
			case bytes.HasPrefix(sc.Bytes(), []byte("started ")):
				p.started.Add(1)
			case bytes.HasPrefix(sc.Bytes(), []byte("late-accepted ")):
				p.lateAccepted.Add(1)
			}
		}
		_ = cmd.Wait() // stdout at EOF first
	}()
	return p, nil
}

// kill ends the bootstrap, if SIGTERM did not, and waits for it.
func (p *formProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// load sends invocations from n callers until d has passed, each with the
// fault and the outcome its index gives it.
func (fr *formRun) load(ctx context.Context, n int, d time.Duration, next *atomic.Int64) {
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				i := next.Add(1) - 1
				fault := soakFaultCycle[i%int64(len(soakFaultCycle))]
				do := soakDos[(i/int64(len(soakFaultCycle)))%int64(len(soakDos))]
				if fault == faultPastDeadline && do == "late" {
					do = "ok" // its context is done from the start: a late write is not late
				}
				fr.invoke(ctx, soakInv{i: i, token: fmt.Sprintf("tok-%s-%d", fr.form, i), fault: fault, do: do})
			}
		})
	}
	wg.Wait()
}

// tail ends the form's run: N invocations in flight, then SIGTERM. Every
// slot polls again first, so that each is handed out at once: one whose
// answer's reply never came does so once the runtime cut it (rapi's stall
// timeout, 10 s, after the post), or cut it twice (repostStalled).
func (fr *formRun) tail(ctx context.Context, n int, p *formProc, next *atomic.Int64) {
	rep, api := fr.rep, fr.api
	fr.quiet.Store(true)
	wctx, wcancel := context.WithTimeout(ctx, soakTailWait)
	err := api.WaitPolls(wctx, n)
	wcancel()
	if err != nil {
		rep.problem("not every slot polls again after the load: %v", err)
	}
	before := api.Stats().Invocations
	var wg sync.WaitGroup
	for range n {
		i := next.Add(1) - 1
		wg.Go(func() {
			fr.invoke(ctx, soakInv{i: i, token: fmt.Sprintf("tok-%s-%d", fr.form, i), fault: faultSIGTERM, do: "sleep"})
		})
	}
	if !waitUntil(10*time.Second, func() bool { return p.started.Load() >= int64(n) }) {
		rep.problem("the SIGTERM tail: %d of %d handed out, %d handlers started",
			api.Stats().Invocations-before, n, p.started.Load())
	}
	var exitedOK bool
	rep.ExitAfter, rep.ExitStatus, exitedOK = sigterm(p.cmd, p.exited)
	if !exitedOK {
		rep.problem("no exit within %v of SIGTERM", soakExitWait)
	}
	// What the runtime did not answer before it exited is lost: Close ends
	// it now rather than at its deadline.
	api.Close()
	wg.Wait()
}

// invoke sends one invocation and files its outcome.
func (fr *formRun) invoke(ctx context.Context, inv soakInv) {
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := fr.api.Invoke(ictx, request(fr.form, inv))
	fr.file(inv, r, err)
}

// file counts the outcome of inv: withheld, lost, answered once, and
// whether that answer was its own and right.
func (fr *formRun) file(inv soakInv, r rapitest.Result, err error) {
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

func (r *formReport) problem(format string, a ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}
