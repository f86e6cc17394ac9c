package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap/zapcore"
)

// BenchmarkInvocationSeen: what seeing one invocation costs, one tiny
// invocation at a time through the whole runtime against the peer of
// BenchmarkInvocation: with everything off, with the profiler labels
// (LMIGO_LABELS, on by default), with the report line (LMIGO_REPORT), and
// both. The runtime logs as on LMI, JSON to stderr (here /dev/null, so
// the write is paid). BenchmarkLabels and BenchmarkReport measure each
// alone. cpu-ns/op is the process's user and system CPU per
// invocation (getrusage), the peer's included: the same for every row, so
// the rows differ by the runtime's own.
func BenchmarkInvocationSeen(b *testing.B) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for _, bc := range []struct {
		name string
		vars env
	}{
		{"off", env{"LMIGO_LABELS": "off", "LMIGO_REPORT": "off"}},
		{"labels", env{"LMIGO_LABELS": "on", "LMIGO_REPORT": "off"}},
		{"report", env{"LMIGO_LABELS": "off", "LMIGO_REPORT": "on"}},
		{"labels+report", env{"LMIGO_LABELS": "on", "LMIGO_REPORT": "on"}},
	} {
		bc.vars["AWS_LAMBDA_LOG_FORMAT"] = "JSON" // as on LMI
		b.Run(bc.name, func(b *testing.B) {
			p := newPeer(b, []byte(`{}`))
			runPeer(b, p, 2, tinyRaw, bc.vars, func(o *options) {
				o.logger, o.stderr = nil, null // the production logger
			})
			p.invoke(b)
			b.ReportAllocs()
			before := cpuTime(b)
			for b.Loop() {
				p.invoke(b)
			}
			b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// reportLines are the report lines in log (JSON lines) by request ID;
// dup lists the request IDs reported twice.
func reportLines(t *testing.T, log string) (byID map[string]map[string]any, dup []string) {
	t.Helper()
	byID = map[string]map[string]any{}
	for line := range strings.Lines(log) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if doc["message"] != msgReport {
			continue
		}
		id, _ := doc["requestId"].(string)
		if byID[id] != nil {
			dup = append(dup, id)
		}
		byID[id] = doc
	}
	return byID, dup
}

// reporting is a Runtime that logs as in production into a buffer.
type reporting struct {
	syncBuffer
	rt   *Runtime
	stop func() // stops it and waits for Run; once
}

// startReporting runs a Runtime for handler against api with
// LMIGO_REPORT=on (looking for leftovers every 10 ms), vars and opts,
// logging as in production into the buffer it returns, until stop or the
// test's end.
func startReporting(t *testing.T, api *rapitest.Server, n int, vars map[string]string, handler any, opts ...Option) *reporting {
	t.Helper()
	r := new(reporting)
	all := map[string]string{"LMIGO_REPORT": "on", "AWS_LAMBDA_LOG_FORMAT": "JSON"}
	maps.Copy(all, vars)
	var err error
	r.rt, err = New(handler, append([]Option{WithLookupEnv(api.Env(all)), func(o *options) {
		o.stderr = zapcore.AddSync(&r.syncBuffer)
		o.tune = append(o.tune, func(rt *Runtime) { rt.left.every = 10 * time.Millisecond })
	}}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	stop, wait := runStoppable(t, api, r.rt, n)
	r.stop = sync.OnceFunc(func() {
		stop()
		if err := wait(); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(r.stop)
	return r
}

// waitReports waits until log holds a report line for each of ids.
func waitReports(t *testing.T, ctx context.Context, log *reporting, ids []string) map[string]map[string]any {
	t.Helper()
	for {
		byID, dup := reportLines(t, log.String())
		if len(dup) > 0 {
			t.Fatalf("reported more than once: %v", dup)
		}
		missing := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return byID[id] != nil })
		if len(missing) == 0 {
			return byID
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no report line for %v:\n%s", missing, log.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestReportEveryOutcome: with LMIGO_REPORT=on, 64 invocations served at
// once at N=64, ending every way but overrun (TestReportOverrun), each get
// one report line in Lambda's JSON shape, with the outcome, errorType and
// responseBytes of their answer: a response, buffered or streamed; an
// error; a panic; runtime.Goexit; an answer after the deadline; a
// request too large to serve.
func TestReportEveryOutcome(t *testing.T) {
	const n = 64
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	log := startReporting(t, api, n, map[string]string{
		"LMIGO_OVERRUN_GRACE":     "1h", // a late answer is a timeout, never an overrun
		"LMIGO_MAX_REQUEST_BYTES": "1KiB",
	}, func(ctx context.Context, ev struct{ Kind string }) (any, error) {
		switch ev.Kind {
		case "error":
			return nil, errors.New("no")
		case "panic":
			panic("boom")
		case "timeout":
			<-ctx.Done()
			return "late", nil
		case "goexit":
			runtime.Goexit()
		case "stream":
			return io.Reader(strings.NewReader("streamed")), nil
		}
		return "fine", nil
	})
	type want struct {
		outcome, errorType string
		bytes              int // -1: the error document's, whatever it is
	}
	kinds := []struct {
		kind string
		want want
	}{
		{"ok", want{outcomeOK, "", len(`"fine"`)}},
		{"stream", want{outcomeOK, "", len("streamed")}},
		{"error", want{outcomeError, "errorString", -1}},
		{"panic", want{outcomePanic, "string", -1}},
		{"goexit", want{outcomeError, errTypeHandlerExited, -1}},
		{"timeout", want{outcomeTimeout, errTypeTimedOut, len(`"late"`)}},
		{"big", want{outcomeError, errTypeRequestTooLarge, -1}},
	}
	ctx, cancel := testContext(t)
	defer cancel()
	ids := make([]string, n)
	wants := map[string]want{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		k := kinds[i%len(kinds)]
		wg.Go(func() {
			req := rapitest.Request{Payload: fmt.Appendf(nil, `{"Kind":%q}`, k.kind)}
			switch k.kind {
			case "timeout":
				req.Timeout = 200 * time.Millisecond
			case "big":
				req.Payload = fmt.Appendf(nil, `{"Kind":"big","pad":%q}`, strings.Repeat("x", 2<<10))
			}
			r, err := api.Invoke(ctx, req)
			if err != nil {
				t.Errorf("invoke %s: %v", k.kind, err)
				return
			}
			mu.Lock()
			ids[i], wants[r.RequestID] = r.RequestID, k.want
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	byID := waitReports(t, ctx, log, ids)
	for _, id := range ids {
		doc, w := byID[id], wants[id]
		if doc["level"] != "INFO" || doc["timestamp"] == nil || doc["outcome"] != w.outcome {
			t.Errorf("%s: %v, want outcome %s at INFO", id, doc, w.outcome)
		}
		if et, _ := doc["errorType"].(string); et != w.errorType {
			t.Errorf("%s: errorType %q, want %q: %v", id, et, w.errorType, doc)
		}
		if b, ok := doc["responseBytes"].(float64); !ok || (w.bytes >= 0 && int(b) != w.bytes) || b <= 0 {
			t.Errorf("%s: responseBytes %v, want %d: %v", id, doc["responseBytes"], w.bytes, doc)
		}
		if d, ok := doc["durationMs"].(float64); !ok || d <= 0 {
			t.Errorf("%s: durationMs %v: %v", id, doc["durationMs"], doc)
		}
	}
	if all, _ := reportLines(t, log.String()); len(all) != n {
		t.Errorf("%d report lines, want %d", len(all), n)
	}
}

// TestReportOverrun: at N=64 with LMIGO_OVERRUN_GRACE=100ms, handlers that
// run past their deadline by the grace are reported as overrun once they
// return (their slots were replaced meanwhile), beside invocations that
// end at once, each once.
func TestReportOverrun(t *testing.T) {
	const n, hung = 64, 4
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	release := make(chan struct{})
	log := startReporting(t, api, n, map[string]string{"LMIGO_OVERRUN_GRACE": "100ms"},
		func(ctx context.Context, ev struct{ Hang bool }) (string, error) {
			if ev.Hang {
				<-release
			}
			return "ok", nil
		})
	ctx, cancel := testContext(t)
	defer cancel()
	var ids, hungIDs []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := rapitest.Request{Payload: []byte(`{}`)}
			if i < hung {
				// A deadline already past when the slot reads it is taken
				// for a clock that disagrees (watchDeadline): 2 s leaves a
				// loaded machine time to hand it out.
				req = rapitest.Request{Payload: []byte(`{"Hang":true}`), Timeout: 2 * time.Second}
			}
			r, err := api.Invoke(ctx, req)
			if err != nil {
				t.Errorf("invoke: %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids = append(ids, r.RequestID)
			if i < hung {
				hungIDs = append(hungIDs, r.RequestID)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, id := range hungIDs { // replaced: past the deadline by the grace
		waitLine(t, ctx, log, id, msgOverrun)
	}
	close(release)
	byID := waitReports(t, ctx, log, ids)
	for _, id := range ids {
		want, wantType := outcomeOK, ""
		if slices.Contains(hungIDs, id) {
			want, wantType = outcomeOverrun, errTypeTimedOut
		}
		if et, _ := byID[id]["errorType"].(string); byID[id]["outcome"] != want || et != wantType {
			t.Errorf("%s: %v, want outcome %s, errorType %q", id, byID[id], want, wantType)
		}
	}
}

// waitLine waits until log holds a line with msg and requestId id.
func waitLine(t *testing.T, ctx context.Context, log *reporting, id, msg string) {
	t.Helper()
	for {
		for line := range strings.Lines(log.String()) {
			if strings.Contains(line, msg) && strings.Contains(line, `"requestId":"`+id+`"`) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %q logged for %s:\n%s", msg, id, log.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// BenchmarkReport: what the report line adds to an invocation's end,
// alone: the line encoded in Lambda's JSON shape and written to
// /dev/null, one write, as the runtime writes it to stderr.
func BenchmarkReport(b *testing.B) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	rt := &Runtime{log: newLogger(limits.FormatJSON, limits.LevelInfo, null)}
	rt.cfg.Report, rt.cfg.OverrunGrace = true, time.Second
	now := time.Now()
	s := &slot{rt: rt, deadline: mono(now.Add(time.Hour))}
	s.inv = rapi.Invocation{RequestID: "8476a536-e9f4-11e8-9739-000000000001", Deadline: now.Add(time.Hour),
		TraceID: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"}
	s.result = outcome{began: mono(now), bytes: 42}
	b.ReportAllocs()
	for b.Loop() {
		s.report()
	}
}
