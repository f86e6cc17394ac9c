package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/loadtest/measure"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// Config is one soak run.
type Config struct {
	N         int           // AWS_LAMBDA_MAX_CONCURRENCY, and closed-loop callers
	Duration  time.Duration // how long the load runs
	Bootstrap string        // the binary; "" builds ./cmd/bootstrap
	// FormsBootstrap is the binary of the handler forms phase; "" builds
	// ./loadtest/soakbootstrap.
	FormsBootstrap string
	// NoForms leaves the handler forms phase out: the first phase gets
	// all of Duration.
	NoForms bool
	Sample  time.Duration // memory sampling period (also LMIGO_METRICS_INTERVAL)
	Log     io.Writer     // progress lines; nil for none
}

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

// Sample is one reading of the bootstrap's memory.
type Sample struct {
	At        time.Duration
	RSS       int64 // VmRSS
	HeapInUse int64 // from the EMF document, 0 when not read at this point
}

// Report is what a soak measured.
type Report struct {
	Duration     time.Duration
	Invocations  int64
	PerSecond    float64
	ByKind       [nKinds]int64
	Wrong        int64    // answers that did not match their request
	WrongSamples []string // the first few of them
	API          rapitest.Stats
	EMF          struct{ Invocations, Errors, Panics int64 }
	RSS          []Sample
	Heap         []Sample // HeapInUse at the end of each metrics interval
	Live         []Sample // live heap after each GC (gctrace), in HeapInUse
	ExitStatus   int
	ExitAfter    time.Duration // from SIGTERM
	Problems     []string
	Notes        []string      // what could not be judged, and why
	Forms        []*formReport // the handler forms phase
}

// OK reports whether the soak found nothing wrong.
func (r *Report) OK() bool {
	for _, f := range r.Forms {
		if len(f.Problems) > 0 {
			return false
		}
	}
	return len(r.Problems) == 0
}

// Run runs one Run. The error is for a Run that could not run; what it
// found wrong is in the report's Problems.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.N < 1 || cfg.Duration <= 0 || cfg.Sample < time.Second {
		return nil, fmt.Errorf("soak: need n >= 1, duration > 0, sample >= 1s")
	}
	var logMu sync.Mutex // the forms phase logs from a goroutine per form
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			logMu.Lock()
			fmt.Fprintf(cfg.Log, "soak: "+format+"\n", a...)
			logMu.Unlock()
		}
	}
	bin, formsBin := cfg.Bootstrap, cfg.FormsBootstrap
	if bin == "" || formsBin == "" && !cfg.NoForms {
		dir, err := os.MkdirTemp("", "lmigo-soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		var pkgs, outs []string
		if bin == "" {
			bin = filepath.Join(dir, "bootstrap")
			pkgs, outs = append(pkgs, target.PkgLmigo), append(outs, bin)
		}
		if formsBin == "" && !cfg.NoForms {
			formsBin = filepath.Join(dir, "soakbootstrap")
			pkgs, outs = append(pkgs, pkgSoakForms), append(outs, formsBin)
		}
		logf("building %s", strings.Join(pkgs, ", "))
		if err := target.Build(ctx, target.HostArch(), pkgs, outs); err != nil {
			return nil, err
		}
	}
	mixFor, formsFor := cfg.Duration/2, cfg.Duration-cfg.Duration/2
	if cfg.NoForms {
		mixFor = cfg.Duration
	}
	api, err := rapitest.New(rapitest.Options{MaxConcurrency: cfg.N, Queue: true, Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	defer api.Close()

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
	rep := &Report{}
	exited := make(chan struct{})
	var emfMu sync.Mutex
	t0 := time.Now()
	go func() {
		defer close(exited)
		var wg sync.WaitGroup
		wg.Go(func() { rep.readEMF(stdout, t0, &emfMu) })
		wg.Go(func() { rep.readGCTrace(stderr, t0, &emfMu) })
		wg.Wait() // both pipes at EOF before Wait closes them
		_ = cmd.Wait()
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()

	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	err = api.WaitPolls(wctx, cfg.N)
	wcancel()
	if err != nil {
		return nil, fmt.Errorf("soak: the bootstrap never polled %d times: %w", cfg.N, err)
	}
	logf("N=%d, %v of mixed load, pid %d", cfg.N, mixFor, cmd.Process.Pid)

	// RSS, sampled from outside.
	pid := cmd.Process.Pid
	rss := measure.NewSampler(func() []int { return []int{pid} }, cfg.Sample/4, t0)

	loadStart := time.Now()
	end := loadStart.Add(mixFor)
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
	for range cfg.N {
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
	rep.ExitAfter, rep.ExitStatus, exitedOK = sigterm(cmd, exited)
	if !exitedOK {
		rep.problem("no exit within %v of SIGTERM", soakExitWait)
	}
	emfMu.Lock()
	rep.check()
	emfMu.Unlock()
	if !cfg.NoForms && ctx.Err() == nil {
		logf("handler forms %s, N=%d each, %v of load under faults, then SIGTERM", strings.Join(soakFormNames, ", "), cfg.N, formsFor)
		rep.Forms = soakFormsPhase(ctx, cfg, formsBin, formsFor, logf)
	}
	return rep, ctx.Err()
}

// ProblemCount counts the ProblemCount of both phases.
func (r *Report) ProblemCount() int {
	n := len(r.Problems)
	for _, f := range r.Forms {
		n += len(f.Problems)
	}
	return n
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

func (r *Report) problem(format string, a ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}

// check turns what was measured into Problems.
func (r *Report) check() {
	st := r.API
	if r.Wrong > 0 {
		r.problem("%d answers did not match their request, e.g. %v", r.Wrong, r.WrongSamples)
	}
	if st.Invocations != r.Invocations || st.Answered()+st.Late != st.Invocations {
		r.problem("exactly once: %d sent, %d handed out, %d answered, %d after the deadline (410)", r.Invocations, st.Invocations, st.Answered(), st.Late)
	}
	if st.Duplicates != 0 || st.Unknown != 0 || st.Violations != 0 || st.Throttles != 0 || st.CrossWired != 0 || st.NoEcho != 0 {
		r.problem("accounting: %d duplicate answers, %d unknown, %d polls over N, %d throttles, %d cross-wired, %d without echo",
			st.Duplicates, st.Unknown, st.Violations, st.Throttles, st.CrossWired, st.NoEcho)
	}
	if sent := r.ByKind[kindLate]; st.Late != st.Timeouts || st.Timeouts != sent {
		r.problem("%d deadlines ignored: %d timeouts, %d late answers (410)", sent, st.Timeouts, st.Late)
	}
	if want := r.ByKind[kindFail] + r.ByKind[kindPanic]; st.Errors != want {
		r.problem("%d errors and panics sent, %d /error posted", want, st.Errors)
	}
	if r.ExitStatus != 0 {
		r.problem("exit status %d after SIGTERM", r.ExitStatus)
	}
	if r.EMF.Invocations != st.Invocations || r.EMF.Panics != r.ByKind[kindPanic] {
		r.problem("metrics: %d invocations and %d panics reported, %d and %d made",
			r.EMF.Invocations, r.EMF.Panics, st.Invocations, r.ByKind[kindPanic])
	}
	// Flat memory. The live heap after each GC is what a leak grows; it
	// also moves with the buffers of the invocations in flight at that GC
	// (up to N of them, some of 4 MiB), a bounded range that the peak of
	// the first third covers. After a warm-up, the median of the last third
	// must stay within 25 % (plus a margin) of that peak; RSS, which the Go
	// runtime gives back slowly, gets a wider margin. HeapInUse (at the end
	// of each metrics interval, on the GC's sawtooth) is reported only.
	heapJudged, rssJudged := false, false
	if first, last, ok := soakThirds(r.Live, soakHeap, soakPeak); ok {
		heapJudged = true
		if last > first+first/4+16<<20 {
			r.problem("live heap grew: peak %s in the first third, median %s in the last", soakMiB(first), soakMiB(last))
		}
	}
	if first, last, ok := soakThirds(r.RSS, soakRSS, soakPeak); ok {
		rssJudged = true
		if last > first+first/2+32<<20 {
			r.problem("RSS grew: peak %s in the first third, median %s in the last", soakMiB(first), soakMiB(last))
		}
	}
	// A short run on a loaded machine may see too few collections to judge
	// the live heap; the RSS, sampled every interval, is judged then. With
	// neither, the run said nothing about memory: a problem.
	switch {
	case !heapJudged && !rssJudged:
		r.problem("too few GCs (%d) and RSS samples (%d) to judge memory: run longer", len(r.Live), len(r.RSS))
	case !heapJudged:
		r.Notes = append(r.Notes, fmt.Sprintf("live heap not judged: %d GCs traced, too few; RSS judged instead", len(r.Live)))
	}
}

// soakThirds returns firstOf the first third of samples and the median of
// the last third, leaving out the first 30 % (warm-up) and the last sample
// (shutdown).
func soakThirds(samples []Sample, v func(Sample) int64, firstOf func([]Sample, func(Sample) int64) int64) (first, last int64, ok bool) {
	if len(samples) > 2 {
		samples = samples[len(samples)*3/10 : len(samples)-1]
	}
	if len(samples) < 6 {
		return 0, 0, false
	}
	k := len(samples) / 3
	return firstOf(samples[:k], v), soakMedian(samples[len(samples)-k:], v), true
}

func soakHeap(s Sample) int64 { return s.HeapInUse }
func soakRSS(s Sample) int64  { return s.RSS }

func soakPeak(samples []Sample, v func(Sample) int64) int64 {
	var p int64
	for _, s := range samples {
		p = max(p, v(s))
	}
	return p
}

func soakMedian(samples []Sample, v func(Sample) int64) int64 {
	vals := make([]int64, len(samples))
	for i, s := range samples {
		vals[i] = v(s)
	}
	slices.Sort(vals)
	return vals[len(vals)/2]
}

func soakMiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func Print(w io.Writer, r *Report) {
	fmt.Fprintf(w, "soak: %d invocations in %v (%.0f/s)\n", r.Invocations, r.Duration.Round(time.Millisecond), r.PerSecond)
	for k := range nKinds {
		fmt.Fprintf(w, "  %-8s %d\n", kindNames[k], r.ByKind[k])
	}
	st := r.API
	fmt.Fprintf(w, "  fake API: %d handed out, %d ended (%d responses, %d errors, %d timeouts), %d late (410), %d faults, %d duplicates, %d cross-wired, %d without echo, max %d outstanding of N\n",
		st.Invocations, st.Ended(), st.Responses, st.Errors, st.Timeouts, st.Late, st.Faults, st.Duplicates, st.CrossWired, st.NoEcho, st.MaxOutstanding)
	if f, l, ok := soakThirds(r.Live, soakHeap, soakPeak); ok {
		fmt.Fprintf(w, "  live heap after GC: peak %s in the first third, median %s in the last (%d GCs)\n", soakMiB(f), soakMiB(l), len(r.Live))
	}
	if f, l, ok := soakThirds(r.Heap, soakHeap, soakMedian); ok {
		fmt.Fprintf(w, "  HeapInUse (EMF): median %s in the first third, %s in the last (%d samples)\n", soakMiB(f), soakMiB(l), len(r.Heap))
	}
	if f, l, ok := soakThirds(r.RSS, soakRSS, soakPeak); ok {
		fmt.Fprintf(w, "  RSS: peak %s in the first third, median %s in the last (%d samples)\n", soakMiB(f), soakMiB(l), len(r.RSS))
	}
	fmt.Fprintf(w, "  exit status %d, %v after SIGTERM\n", r.ExitStatus, r.ExitAfter.Round(time.Millisecond))
	printForms(w, r.Forms)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
	if r.OK() {
		fmt.Fprintln(w, "  OK: every invocation answered exactly once, memory flat; every form answered each invocation handed out once, with its own token")
		return
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "  PROBLEM:", p)
	}
	for _, f := range r.Forms {
		for _, p := range f.Problems {
			fmt.Fprintf(w, "  PROBLEM form %s: %s\n", f.Form, p)
		}
	}
}

// soakShutdown is the bootstraps' shutdown budget (LMIGO_SHUTDOWN_TIMEOUT).
// The soak judges exactly once, not the platform's budget: with its default
// (500 ms), a machine busy enough could keep the handlers of the SIGTERM
// tail from finishing in time, and their invocations would be lost for the
// machine's speed alone.
const soakShutdown = 5 * time.Second

// soakExitWait bounds how long the soak waits for the process after SIGTERM:
// the shutdown budget, and room beyond it for a busy machine.
const soakExitWait = 3 * soakShutdown

// sigterm sends cmd SIGTERM and waits up to soakExitWait for exited (closed
// once cmd.Wait returned): how long it took, its exit status, and whether it
// exited in time.
func sigterm(cmd *exec.Cmd, exited <-chan struct{}) (after time.Duration, status int, ok bool) {
	sent := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return time.Since(sent), cmd.ProcessState.ExitCode(), true
	case <-time.After(soakExitWait):
		return 0, 0, false
	}
}
