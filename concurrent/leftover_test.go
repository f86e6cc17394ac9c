package concurrent

import (
	"context"
	"encoding/json"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/internal/leftover"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// leakingHandler is a handler whose goroutines outlive it on demand:
// "leak" leaves two blocked until release is closed; "wait" starts work
// with Go and waits for it; "go" starts work with Go and does not wait;
// "detached" starts work with GoDetached, blocked until release; "hang"
// blocks until release (an overrun).
func leakingHandler(release <-chan struct{}) func(ctx context.Context, ev struct{ Kind string }) (string, error) {
	return func(ctx context.Context, ev struct{ Kind string }) (string, error) {
		switch ev.Kind {
		case "leak":
			for range 2 {
				go func() { <-release }()
			}
		case "wait":
			if err := Go(ctx, func(context.Context) error { return nil }); err != nil {
				return "", err
			}
			if err := Wait(ctx); err != nil {
				return "", err
			}
		case "go":
			if err := Go(ctx, func(context.Context) error { return nil }); err != nil {
				return "", err
			}
		case "detached":
			GoDetached(ctx, func(context.Context) { <-release })
		case "hang":
			<-release
		}
		return ev.Kind, nil
	}
}

// invokeKind invokes api with {"Kind":kind} and returns the request ID.
func invokeKind(t *testing.T, ctx context.Context, api *rapitest.Server, kind string, timeout time.Duration) string {
	t.Helper()
	r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"Kind":"` + kind + `"}`), Timeout: timeout})
	if err != nil {
		t.Fatalf("invoke %s: %v", kind, err)
	}
	return r.RequestID
}

// otherLeftover leaves a goroutine, until release, under the labels of an
// invocation another runtime of this test binary served: a look scans the
// whole process, and a test that ran before may have left one.
func otherLeftover(release <-chan struct{}) {
	pprof.Do(context.Background(), pprof.Labels(leftover.KeyRequestID, "another-runtime", leftover.KeyFunction, "other"),
		func(context.Context) { go func() { <-release }() })
}

// leftoverLines returns the warnings about goroutines that outlived their
// invocation in log, by request ID.
func leftoverLines(t *testing.T, log string) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for line := range strings.Lines(log) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if doc["message"] == msgLeftover {
			id, _ := doc["requestId"].(string)
			out[id] = append(out[id], doc)
		}
	}
	return out
}

// TestLeftoverEveryMinute: with LMIGO_REPORT=on the runtime looks for
// goroutines that outlived their invocation on its own (every minute;
// here every 10 ms). The invocation that left two blocked gets one WARN
// with count 2, and no second one at later looks; work started with Go,
// waited for or not, counts nothing; GoDetached's is not warned about.
func TestLeftoverEveryMinute(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 4, Queue: true})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	log := startReporting(t, api, 4, nil, leakingHandler(release))
	ctx, cancel := testContext(t)
	defer cancel()
	ids := map[string]string{}
	for _, kind := range []string{"wait", "go", "detached", "leak"} {
		ids[kind] = invokeKind(t, ctx, api, kind, 0)
	}
	waitLine(t, ctx, log, ids["leak"], msgLeftover)
	rt := log.rt
	rt.findLeftovers() // another look, begun after every answer
	rt.findLeftovers()
	warned := leftoverLines(t, log.String())
	if w := warned[ids["leak"]]; len(w) != 1 || w[0]["count"] != float64(2) || w[0]["level"] != "WARN" {
		t.Errorf("warnings for the leaking invocation: %v, want one WARN with count 2", w)
	}
	for _, kind := range []string{"wait", "go", "detached"} {
		if w := warned[ids[kind]]; len(w) != 0 {
			t.Errorf("%s: warned %v, want nothing", kind, w)
		}
	}
}

// TestLeftoverAtShutdown: with LMIGO_REPORT off, the look at shutdown
// warns of the invocation that left a goroutine: its WARN is in the log
// by the time Run returns.
func TestLeftoverAtShutdown(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	release := make(chan struct{})
	defer close(release)
	log := startReporting(t, api, 2, map[string]string{"LMIGO_REPORT": "off"}, leakingHandler(release))
	ctx, cancel := testContext(t)
	defer cancel()
	otherLeftover(release)
	leak := invokeKind(t, ctx, api, "leak", 0)
	wait := invokeKind(t, ctx, api, "wait", 0)
	log.stop()
	warned := leftoverLines(t, log.String())
	if len(warned[leak]) != 1 || len(warned[wait]) != 0 {
		t.Errorf("warnings %v, want one for %s", warned, leak)
	}
	if strings.Contains(log.String(), msgReport) {
		t.Errorf("a report line with LMIGO_REPORT off:\n%s", log.String())
	}
}

// TestLeftoverOnOverrun: when the overrun watch replaces a slot it looks,
// and warns of the invocation answered before that left a goroutine, not
// of the overrunning one, still served. The look follows the overrun's
// WARN, in the same look of the watch.
func TestLeftoverOnOverrun(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	release := make(chan struct{})
	defer close(release)
	log := startReporting(t, api, 2, map[string]string{"LMIGO_REPORT": "off", "LMIGO_OVERRUN_GRACE": "50ms"},
		leakingHandler(release))
	ctx, cancel := testContext(t)
	defer cancel()
	otherLeftover(release)
	leak := invokeKind(t, ctx, api, "leak", 0)
	hang := invokeKind(t, ctx, api, "hang", time.Second) // read before its deadline, however loaded
	waitLine(t, ctx, log, hang, msgOverrun)
	waitLine(t, ctx, log, leak, msgLeftover)
	warned := leftoverLines(t, log.String())
	if len(warned[leak]) != 1 || len(warned[hang]) != 0 {
		t.Errorf("warnings %v at the overrun, want one for %s", warned, leak)
	}
}

// TestLeftoverLabelsOff: LMIGO_LABELS=off sets no labels, and no look
// finds anything.
func TestLeftoverLabelsOff(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
	release := make(chan struct{})
	defer close(release)
	log := startReporting(t, api, 2, map[string]string{"LMIGO_LABELS": "off"}, leakingHandler(release))
	ctx, cancel := testContext(t)
	defer cancel()
	leak := invokeKind(t, ctx, api, "leak", 0)
	found, err := leftover.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if c := found[leak]; c != nil {
		t.Errorf("goroutines labeled with labels off: %+v", c)
	}
	log.stop()
	if w := leftoverLines(t, log.String()); len(w) != 0 {
		t.Errorf("warnings with labels off: %v", w)
	}
}

// TestLeftoverOnOverrunsTogether: k handlers that overrun at once are
// replaced in one look of the watch, which takes one profile for them
// all, not one each. Each invocation answered before that left a
// goroutine gets its one WARN.
func TestLeftoverOnOverrunsTogether(t *testing.T) {
	const k = 3
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2 * k, Queue: true})
	var wg sync.WaitGroup
	defer wg.Wait() // the overruns return once released
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, k)
	log := startReporting(t, api, 2*k, map[string]string{"LMIGO_REPORT": "off", "LMIGO_OVERRUN_GRACE": "50ms"},
		func(_ context.Context, ev struct{ Kind string }) (string, error) {
			switch ev.Kind {
			case "leak":
				go func() { <-release }()
			case "hang":
				started <- struct{}{}
				<-release
			}
			return ev.Kind, nil
		})
	ctx, cancel := testContext(t)
	defer cancel()
	leaks := make([]string, k)
	for i := range leaks {
		leaks[i] = invokeKind(t, ctx, api, "leak", 0)
	}
	// One deadline for all: the watch finds them in one look, once each
	// was handed out before it.
	deadline := time.Now().Add(2 * time.Second)
	for range k {
		wg.Go(func() {
			_, _ = api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"Kind":"hang"}`),
				Headers: map[string]string{"Lambda-Runtime-Deadline-Ms": strconv.FormatInt(deadline.UnixMilli(), 10)}})
		})
	}
	for range k {
		<-started
	}
	if time.Now().After(deadline) {
		t.Skip("the overruns were handed out past their deadline: too loaded to tell one look from several")
	}
	looks := log.rt.left.looks.Load()
	for strings.Count(log.String(), msgOverrun) < k {
		select {
		case <-ctx.Done():
			t.Fatalf("not %d overruns logged:\n%s", k, log.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	for _, id := range leaks {
		waitLine(t, ctx, log, id, msgLeftover)
	}
	if n := log.rt.left.looks.Load() - looks; n != 1 {
		t.Errorf("%d profiles for %d overruns found at once, want 1", n, k)
	}
	warned := leftoverLines(t, log.String())
	for _, id := range leaks {
		if len(warned[id]) != 1 {
			t.Errorf("warnings %v, want one for %s", warned[id], id)
		}
	}
	if len(warned) != k {
		t.Errorf("warnings %v, want one for each of %v", warned, leaks)
	}
}
