package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// The soak's first phase: the reference bootstrap under a mixed load with
// failures among the invocations, its memory sampled from outside, its
// metrics and gctrace lines read from its output, ending in SIGTERM.

// soakKind is one kind of invocation of the mix.
type soakKind int

const (
	kindSmall   soakKind = iota // {"id":i}: a small JSON answer
	kindSize                    // {"size":S}: exactly S bytes
	kindFail                    // {"fail":...}: a handler error
	kindPanic                   // {"panic":true}
	kindSleep                   // {"sleep_ms":5}
	kindLate                    // {"cpu_ms":30} with a 5 ms timeout: timed out, then a late answer (410)
	kindRefused                 // a small answer the fake refuses with 410 (PostFault)
	nKinds
)

var kindNames = [nKinds]string{"small", "size", "fail", "panic", "sleep", "late", "refused"}

// soakMix is the order kinds come in, per 100 invocations.
var soakMix = func() []soakKind {
	weights := [nKinds]int{kindSmall: 68, kindSize: 12, kindFail: 8, kindPanic: 4, kindSleep: 4, kindLate: 2, kindRefused: 2}
	var m []soakKind
	for k, w := range weights {
		for range w {
			m = append(m, soakKind(k))
		}
	}
	// Spread each kind over the cycle rather than in runs.
	out := make([]soakKind, len(m))
	for i := range m {
		out[(i*37)%len(m)] = m[i]
	}
	return out
}()

// soakSizes are the response sizes of kindSize; the 4 MiB one is above the
// buffer retain cap, so it tests that memory goes back.
var soakSizes = []int{1 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20}

// mixPhase runs the reference bootstrap bin under the mixed load for d,
// then stops it with SIGTERM and checks what it measured.
func mixPhase(ctx context.Context, cfg Config, bin string, d time.Duration, logf func(string, ...any)) (*Report, error) {
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: cfg.N, Queue: true, Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	defer api.Close()
	rep := &Report{}
	p, err := startMix(bin, api, cfg, rep)
	if err != nil {
		return nil, err
	}
	defer p.kill()

	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	err = api.WaitPolls(wctx, cfg.N)
	wcancel()
	if err != nil {
		return nil, fmt.Errorf("soak: the bootstrap never polled %d times: %w", cfg.N, err)
	}
	logf("N=%d, %v of mixed load, pid %d", cfg.N, d, p.cmd.Process.Pid)

	// RSS, sampled from outside.
	pid := p.cmd.Process.Pid
	rss := measure.NewSampler(func() []int { return []int{pid} }, cfg.Sample/4, p.t0)
	mixLoad(ctx, cfg.N, api, rep, d, logf)

	// Every slot polls again once the late answers are in.
	wctx, wcancel = context.WithTimeout(ctx, 30*time.Second)
	err = api.WaitPolls(wctx, cfg.N)
	wcancel()
	rep.API = api.Stats()
	for _, s := range rss.Stop() {
		rep.RSS = append(rep.RSS, Sample{At: s.At, RSS: s.RSS})
	}
	if err != nil {
		rep.problem("not every slot polls again after the load: %v", err)
	}

	// A graceful stop flushes the last metrics document.
	var exitedOK bool
	rep.ExitAfter, rep.ExitStatus, exitedOK = sigterm(p.cmd, p.exited)
	if !exitedOK {
		rep.problem("no exit within %v of SIGTERM", soakExitWait)
	}
	p.mu.Lock()
	rep.check()
	p.mu.Unlock()
	return rep, nil
}

// mixProc is the reference bootstrap of the mixed phase, its output read
// into the report until it exits.
type mixProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once both pipes are read and cmd waited for
	mu     sync.Mutex    // the report's figures read from the output
	t0     time.Time
}

// startMix starts bin against api, its stdout read for EMF documents and
// its stderr for gctrace lines into rep.
func startMix(bin string, api *rapitest.Server, cfg Config, rep *Report) (*mixProc, error) {
	cmd := exec.Command(bin)
	cmd.Env = []string{
		"AWS_LAMBDA_RUNTIME_API=" + api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY=" + strconv.Itoa(cfg.N),
		"AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_NAME=soak",
		"AWS_LAMBDA_LOG_LEVEL=FATAL", // the failures are on purpose: keep stderr quiet
		"LMIGO_METRICS=emf",
		"LMIGO_METRICS_INTERVAL=" + cfg.Sample.String(),
		"LMIGO_SIGTERM=1",
		"LMIGO_SHUTDOWN_TIMEOUT=" + soakShutdown.String(),
		"GODEBUG=gctrace=1", // the live heap after each GC, on stderr
		// The runtime makes little garbage (responses are sent from the
		// handler's own bytes), so collect more often: the live heap is
		// then sampled enough times to judge it flat, even in a short run.
		"GOGC=20",
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &mixProc{cmd: cmd, exited: make(chan struct{}), t0: time.Now()}
	go func() {
		defer close(p.exited)
		var wg sync.WaitGroup
		wg.Go(func() { rep.readEMF(stdout, p.t0, &p.mu) })
		wg.Go(func() { rep.readGCTrace(stderr, p.t0, &p.mu) })
		wg.Wait() // both pipes at EOF before Wait closes them
		_ = cmd.Wait()
	}()
	return p, nil
}

// kill ends the bootstrap, if SIGTERM did not, and waits for it.
func (p *mixProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// mixLoad runs n closed-loop callers of the mix against api for d, each
// answer checked, and says how far it has come every 10 s.
func mixLoad(ctx context.Context, n int, api *rapitest.Server, rep *Report, d time.Duration, logf func(string, ...any)) {
	loadStart := time.Now()
	end := loadStart.Add(d)
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		wrong sync.Mutex
	)
	progress := time.NewTicker(10 * time.Second)
	loaded := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		for {
			select {
			case <-progress.C:
				logf("%v: %d invocations", time.Since(loadStart).Round(time.Second), next.Load())
			case <-loaded:
				return
			}
		}
	}()
	for range n {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				i := next.Add(1) - 1
				kind := soakMix[i%int64(len(soakMix))]
				if msg := soakInvoke(ctx, api, i, kind); msg != "" {
					wrong.Lock()
					rep.Wrong++
					if len(rep.WrongSamples) < 5 {
						rep.WrongSamples = append(rep.WrongSamples, msg)
					}
					wrong.Unlock()
				}
				atomic.AddInt64(&rep.ByKind[kind], 1)
			}
		})
	}
	wg.Wait()
	progress.Stop()
	close(loaded)
	<-progressDone
	rep.Duration = time.Since(loadStart)
	rep.Invocations = next.Load()
	rep.PerSecond = float64(rep.Invocations) / rep.Duration.Seconds()
}

// soakInvoke sends invocation i of kind and checks its answer; it returns
// what was wrong, or "".
func soakInvoke(ctx context.Context, api *rapitest.Server, i int64, kind soakKind) string {
	req := rapitest.Request{}
	size := 0
	switch kind {
	case kindSmall, kindRefused:
		req.Payload = fmt.Appendf(nil, `{"id":%d}`, i)
		if kind == kindRefused {
			req.PostFault = &rapitest.Fault{Status: 410}
		}
	case kindSize:
		size = soakSizes[(i/int64(len(soakMix)))%int64(len(soakSizes))]
		req.Payload = fmt.Appendf(nil, `{"size":%d}`, size)
	case kindFail:
		req.Payload = fmt.Appendf(nil, `{"fail":"soak %d"}`, i)
	case kindPanic:
		req.Payload = []byte(`{"panic":true}`)
	case kindSleep:
		req.Payload = fmt.Appendf(nil, `{"sleep_ms":5,"id":%d}`, i)
	case kindLate:
		req.Payload = []byte(`{"cpu_ms":30}`)
		req.Timeout = 5 * time.Millisecond
	}
	ictx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	r, err := api.Invoke(ictx, req)
	if err != nil {
		return fmt.Sprintf("invocation %d (%s): %v", i, kindNames[kind], err)
	}
	var errType string
	if r.Err != nil {
		errType = r.Err.Type
	}
	bad := func(what string) string {
		return fmt.Sprintf("invocation %d (%s): %s: error %q, body %.80q", i, kindNames[kind], what, errType, r.Body)
	}
	switch kind {
	case kindSmall, kindSleep, kindRefused:
		var rep demo.Reply
		if r.Err != nil || json.Unmarshal(r.Body, &rep) != nil || !rep.OK || string(rep.ID) != strconv.FormatInt(i, 10) {
			return bad("not its answer")
		}
	case kindSize:
		if r.Err != nil || len(r.Body) != size {
			return bad(fmt.Sprintf("want %d bytes, got %d", size, len(r.Body)))
		}
	case kindFail:
		if r.Err == nil || !bytes.Contains(r.Err.Body, fmt.Appendf(nil, `"errorMessage":"soak %d"`, i)) {
			return bad("not its error")
		}
	case kindPanic:
		if r.Err == nil || !bytes.Contains(r.Err.Body, []byte("demo: panic requested")) || !bytes.Contains(r.Err.Body, []byte("stackTrace")) {
			return bad("not a panic report")
		}
	case kindLate:
		// 30 ms of work against a 5 ms deadline: the deadline decides.
		if r.Err == nil || r.Err.Type != rapitest.ErrorTypeTimeout {
			return bad("not a timeout")
		}
	}
	return ""
}

// readEMF reads the bootstrap's stdout: one EMF document a line.
func (r *Report) readEMF(stdout io.Reader, t0 time.Time, mu *sync.Mutex) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var doc struct {
			Invocations, Errors, Panics int64
			HeapInUse                   int64
		}
		if json.Unmarshal(sc.Bytes(), &doc) != nil {
			continue
		}
		mu.Lock()
		r.EMF.Invocations += doc.Invocations
		r.EMF.Errors += doc.Errors
		r.EMF.Panics += doc.Panics
		r.Heap = append(r.Heap, Sample{At: time.Since(t0), HeapInUse: doc.HeapInUse})
		mu.Unlock()
	}
}

// gcLive matches the heap sizes of a gctrace line (measure.IsGCLine):
// before, after and live after marking, "12->14->6 MB".
var gcLive = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// readGCTrace reads the bootstrap's stderr for GODEBUG=gctrace=1 lines.
func (r *Report) readGCTrace(stderr io.Reader, t0 time.Time, mu *sync.Mutex) {
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if !measure.IsGCLine(sc.Bytes()) {
			continue
		}
		m := gcLive.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		live, _ := strconv.ParseInt(string(m[3]), 10, 64)
		mu.Lock()
		r.Live = append(r.Live, Sample{At: time.Since(t0), HeapInUse: live << 20})
		mu.Unlock()
	}
}
