package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/lmigo/lmigo/loadtest/fakeapi"
)

// runDemo is `make run`: the reference bootstrap under a short, mixed,
// closed-loop load from the fake Runtime API, then a report.
func runDemo(ctx context.Context, args []string) error {
	fs := newFlagSet("run")
	n := fs.Int("n", 8, "AWS_LAMBDA_MAX_CONCURRENCY of the bootstrap")
	callers := fs.Int("c", 0, "closed-loop callers (default: N)")
	count := fs.Int("count", 4000, "invocations to send at most")
	dur := fs.Duration("duration", 5*time.Second, "time to send load at most")
	bin := fs.String("bootstrap", "", "bootstrap binary to serve (default: build ./cmd/bootstrap)")
	_ = fs.Parse(args)
	if *callers <= 0 {
		*callers = *n
	}

	dir, err := os.MkdirTemp("", "lmigo-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if *bin == "" {
		fmt.Println("building ./cmd/bootstrap ...")
		if *bin, err = buildBootstrap(ctx, "./cmd/bootstrap", dir); err != nil {
			return err
		}
	}

	api, err := fakeapi.New(fakeapi.Options{MaxConcurrency: *n, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer api.Close()

	env := append(os.Environ(),
		"AWS_LAMBDA_RUNTIME_API="+api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY="+strconv.Itoa(*n),
		"AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_NAME=lmigo-demo",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
		"AWS_LAMBDA_LOG_LEVEL=WARN",
	)
	proc, err := startProcess(*bin, env)
	if err != nil {
		return err
	}
	defer func() { _ = proc.stop(2 * time.Second) }()

	readyCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = api.WaitPolls(readyCtx, *n)
	cancel()
	if err != nil {
		return fmt.Errorf("bootstrap did not poll %d times: %w\n%s", *n, err, proc.stderr.String())
	}
	ready := time.Since(proc.started)
	cpu0, _ := proc.cpu()

	fmt.Printf("load: %d closed-loop callers, at most %d invocations or %s, N=%d\n", *callers, *count, *dur, *n)
	res := closedLoop(ctx, api, *callers, *count, *dur, demoMix)
	cpu1, _ := proc.cpu()
	peak, rss, _ := proc.memKB()
	stats := api.Stats()

	r := report{
		N: *n, Callers: *callers, Ready: ready, Elapsed: res.elapsed,
		Sent: res.sent, OK: res.ok, FuncErrors: res.funcErrors, Throttles: res.throttles, Failures: res.failures,
		Latencies: res.latencies, CPU: cpu1 - cpu0, PeakRSSKB: peak, RSSKB: rss, Stats: stats,
	}
	r.print(os.Stdout)
	if stats.Violations > 0 {
		return fmt.Errorf("%d protocol violations (more than N polls plus invocations in flight)", stats.Violations)
	}
	if res.failures > 0 || res.wrong > 0 {
		return fmt.Errorf("%d invocations failed and %d got a wrong answer", res.failures, res.wrong)
	}
	return nil
}

// workload is one kind of request of a mix and the check of its answer.
type workload struct {
	name    string
	payload []byte
	check   func(fakeapi.Result) bool
}

var demoMix = func() []workload {
	ok := func(r fakeapi.Result) bool { return r.Err == nil }
	failed := func(r fakeapi.Result) bool { return r.Err != nil }
	size := func(n int) func(fakeapi.Result) bool {
		return func(r fakeapi.Result) bool { return r.Err == nil && len(r.Body) == n }
	}
	return []workload{
		{"tiny", []byte(`{}`), ok},
		{"tiny", []byte(`{}`), ok},
		{"tiny", []byte(`{}`), ok},
		{"1KiB", []byte(`{"size":1024}`), size(1024)},
		{"64KiB", []byte(`{"size":65536}`), size(65536)},
		{"sleep5ms", []byte(`{"sleep_ms":5}`), ok},
		{"cpu1ms", []byte(`{"cpu_ms":1}`), ok},
		{"fail", []byte(`{"fail":"demo failure"}`), failed},
		{"panic", []byte(`{"panic":true}`), failed},
	}
}()

type loadResult struct {
	elapsed                     time.Duration
	sent, ok, funcErrors, wrong int64
	throttles, failures         int64
	latencies                   []time.Duration
}

// closedLoop runs callers that each send the next invocation as soon as
// they have an answer. A throttled invocation is retried after a short
// pause, as Lambda's own retries would, and counted.
func closedLoop(ctx context.Context, api *fakeapi.Server, callers, count int, dur time.Duration, mix []workload) loadResult {
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var (
		next atomic.Int64
		res  loadResult
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range callers {
		wg.Go(func() {
			var lat []time.Duration
			var ok, fe, wrong, thr, fail int64
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(count) {
					break
				}
				w := mix[int(i)%len(mix)]
				for {
					r, err := api.Invoke(ctx, fakeapi.Request{Payload: w.payload})
					if errors.Is(err, fakeapi.ErrThrottled) {
						thr++
						time.Sleep(200 * time.Microsecond)
						continue
					}
					switch {
					case err != nil:
						if ctx.Err() == nil {
							fail++
						}
					case !w.check(r):
						wrong++
					case r.Err != nil:
						fe++
					default:
						ok++
					}
					if err == nil {
						lat = append(lat, r.Latency)
					}
					break
				}
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.ok += ok
			res.funcErrors += fe
			res.wrong += wrong
			res.throttles += thr
			res.failures += fail
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.sent = res.ok + res.funcErrors + res.wrong + res.failures
	return res
}

type report struct {
	N, Callers                      int
	Ready, Elapsed, CPU             time.Duration
	Sent, OK, FuncErrors, Throttles int64
	Failures                        int64
	Latencies                       []time.Duration
	PeakRSSKB, RSSKB                int64
	Stats                           fakeapi.Stats
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)-1))
	return sorted[i]
}

func (r report) print(w io.Writer) {
	sort.Slice(r.Latencies, func(i, j int) bool { return r.Latencies[i] < r.Latencies[j] })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	answered := r.OK + r.FuncErrors
	perInv := time.Duration(0)
	if answered > 0 {
		perInv = r.CPU / time.Duration(answered)
	}
	rows := [][2]string{
		{"N (max concurrency) / callers", fmt.Sprintf("%d / %d", r.N, r.Callers)},
		{"exec to N polls outstanding", r.Ready.Round(time.Microsecond).String()},
		{"invocations answered", fmt.Sprintf("%d (%d ok, %d function errors as asked)", answered, r.OK, r.FuncErrors)},
		{"throughput", fmt.Sprintf("%.0f invocations/s", float64(answered)/r.Elapsed.Seconds())},
		{"throttled (Runtime.Unavailable), retried", strconv.FormatInt(r.Throttles, 10)},
		{"lost or unanswered", strconv.FormatInt(r.Failures, 10)},
		{"latency p50 / p90 / p99 / max", fmt.Sprintf("%s / %s / %s / %s",
			percentile(r.Latencies, .50).Round(time.Microsecond), percentile(r.Latencies, .90).Round(time.Microsecond),
			percentile(r.Latencies, .99).Round(time.Microsecond), percentile(r.Latencies, 1).Round(time.Microsecond))},
		{"bootstrap CPU per invocation", perInv.Round(100 * time.Nanosecond).String()},
		{"bootstrap peak RSS / RSS now", fmt.Sprintf("%.1f MiB / %.1f MiB", float64(r.PeakRSSKB)/1024, float64(r.RSSKB)/1024)},
		{"max polls + in flight (limit N)", fmt.Sprintf("%d (violations: %d)", r.Stats.MaxOutstanding, r.Stats.Violations)},
		{"TCP connections opened", strconv.FormatInt(r.Stats.NewConns, 10)},
		{"late (410) / too large (413) / bad (400)", fmt.Sprintf("%d / %d / %d", r.Stats.Late, r.Stats.TooLarge, r.Stats.BadRequests)},
	}
	fmt.Fprintln(tw, "lmigo demo run\t")
	for _, row := range rows {
		fmt.Fprintf(tw, "  %s\t%s\n", row[0], row[1])
	}
	_ = tw.Flush()
}
