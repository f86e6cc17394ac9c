package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

// item is one kind of invocation of a workload and the check of its answer.
type item struct {
	name    string
	payload []byte
	check   func(outcome) bool
	// group, when set, names the events file the item came from: the
	// load keeps the latency of each group apart (loadStats.Groups).
	group string
}

// workload is what a run sends, on the demo contract of cmd/bootstrap/demo.
//
//	tiny         {} and its small JSON answer
//	size:S       a response of exactly S bytes (S: 1KiB, 1MiB, 6MiB, 300, ...; 2 B to 6 MiB)
//	wait:D       an I/O-bound handler: it waits D (whole ms, as on a downstream
//	             call), then gives tiny's answer
//	mix          tiny x3, 1 KiB, 64 KiB, sleep 5 ms, 1 ms of CPU, a function error; cycled
//	mix-panic    mix and a panic. aws-lambda-go exits after a panic (and so would
//	             the run), so mix never panics and mix-panic is refused for it
//	grow         one invocation of each size (the warm-up: the demo's body cache
//	             fills), -settle, RSS read ("before"); then waves of N concurrent
//	             invocations (all N held at once by the demo's gather barrier
//	             when N > 1), one wave per size from 64 KiB up to 6 MiB,
//	             -rounds times; then -idle and RSS is read again ("after")
//	stack:S      as grow, with one wave a round: N invocations that each grow
//	             their goroutine's stack to S (16KiB, 32KiB, ...: a power of
//	             two) and are held at once by the gather barrier
//	event:NAME   a realistic event of package events (apigw, sqs, s3, github)
//	             to its typed handler, served by the events bootstraps
//	             (loadtest/events/lmigo, loadtest/events/awslambdago)
type workload struct {
	name  string
	items []item // cycled; nil for waves
	// waves are a round of a waves workload (grow, stack:S): each item is
	// sent n times at once and held by the demo's gather until all n are
	// in; nil for the others.
	waves func(n int) []item
	// warm is the warm-up of a waves workload, one invocation each, before
	// RSS is read the first time.
	warm   []item
	panics bool
	floor  bool // served by the floor (floorbootstrap): tiny, size:S and wait:D
}

// waved says whether w is sent in waves, with RSS read before and after.
func (w workload) waved() bool { return w.waves != nil }

// eventPrefix starts the workloads of realistic events.
const eventPrefix = "event:"

// growSizes are the response sizes of a grow round, smallest first.
var growSizes = []int{64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 6 << 20}

// warmUp sends items one after the other, each retried until it is
// answered: the waves workloads' warm-up, after which RSS is read the
// first time.
func warmUp(ctx context.Context, inv invoker, items []item, pause time.Duration) loadStats {
	rec := newRecorder()
	start := time.Now()
	for i := range items {
		rec.do(ctx, inv, &items[i], pause, false, time.Time{}, time.Time{})
	}
	return rec.stats(time.Since(start))
}

func parseWorkload(s string) (workload, error) {
	switch s {
	case "tiny":
		return workload{name: s, items: []item{tinyItem()}, floor: true}, nil
	case "mix", "mix-panic":
		w := workload{name: s, items: mixItems()}
		if s == "mix-panic" {
			w.items = append(w.items, item{name: "panic", payload: []byte(`{"panic":true}`), check: isFunctionError})
			w.panics = true
		}
		return w, nil
	case "grow":
		// The warm-up is one invocation of each size, so that the
		// handler's body cache holds every body before RSS is read the
		// first time: the cache is the handler's memory, and it is there
		// after the burst too.
		var warm []item
		for _, size := range growSizes {
			warm = append(warm, sizeItem(size))
		}
		return workload{name: s, warm: warm, waves: func(n int) []item {
			var wave []item
			for _, size := range growSizes {
				it := sizeItem(size)
				it.payload = sizePayload(size, n)
				wave = append(wave, it)
			}
			return wave
		}}, nil
	}
	if name, ok := strings.CutPrefix(s, eventPrefix); ok {
		ev, err := events.Get(name)
		if err != nil {
			return workload{}, fmt.Errorf("workload %s: %w", s, err)
		}
		return workload{name: s, items: []item{{name: s, payload: ev.Payload, check: func(o outcome) bool {
			return o.FunctionError == "" && json.Valid(o.Body)
		}}}}, nil
	}
	if v, ok := strings.CutPrefix(s, "wait:"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Millisecond || d%time.Millisecond != 0 || d > time.Minute {
			return workload{}, fmt.Errorf("workload %s: want a wait of whole milliseconds, 1ms to 1m (wait:20ms)", s)
		}
		return workload{name: s, items: []item{waitItem(d)}, floor: true}, nil
	}
	if v, ok := strings.CutPrefix(s, "stack:"); ok {
		n, err := parseSize(v)
		if err != nil || n < 16<<10 || n > 1<<20 || n&(n-1) != 0 {
			return workload{}, fmt.Errorf("workload %s: want a stack of a power of two, 16KiB to 1MiB (stack:32KiB)", s)
		}
		return workload{name: s, warm: []item{stackItem(n, 0)}, waves: func(gather int) []item {
			return []item{stackItem(n, gather)}
		}}, nil
	}
	if v, ok := strings.CutPrefix(s, "size:"); ok {
		n, err := parseSize(v)
		if err != nil {
			return workload{}, err
		}
		if n < 2 || n > demo.MaxSize {
			return workload{}, fmt.Errorf("workload %s: size out of range 2 B..6 MiB", s)
		}
		return workload{name: s, items: []item{sizeItem(n)}, floor: true}, nil
	}
	return workload{}, fmt.Errorf("unknown workload %q (tiny, size:S, wait:D, mix, mix-panic, grow, stack:S, event:NAME)", s)
}

func tinyItem() item {
	return item{name: "tiny", payload: []byte(`{}`), check: func(o outcome) bool {
		return o.FunctionError == "" && bytes.HasPrefix(o.Body, []byte(`{"ok":true`))
	}}
}

// waitItem waits d in the handler, then answers as tiny.
func waitItem(d time.Duration) item {
	it := tinyItem()
	it.name, it.payload = "wait"+d.String(), fmt.Appendf(nil, `{"sleep_ms":%d}`, d.Milliseconds())
	return it
}

// stackItem grows the handler's stack to n bytes; gather > 1 holds the
// invocation until gather of them are in the handler at once.
func stackItem(n, gather int) item {
	it := tinyItem()
	it.name, it.payload = "stack"+formatSize(n), fmt.Appendf(nil, `{"stack_kib":%d}`, n>>10)
	if gather > 1 {
		it.payload = fmt.Appendf(nil, `{"stack_kib":%d,"gather":%d}`, n>>10, gather)
	}
	return it
}

func sizeItem(n int) item {
	return item{name: formatSize(n), payload: sizePayload(n, 0), check: func(o outcome) bool {
		return o.FunctionError == "" && len(o.Body) == n
	}}
}

// sizePayload asks for n bytes; gather > 1 holds the invocation until
// gather of them are in the handler at once.
func sizePayload(n, gather int) []byte {
	if gather > 1 {
		return fmt.Appendf(nil, `{"size":%d,"gather":%d}`, n, gather)
	}
	return fmt.Appendf(nil, `{"size":%d}`, n)
}

func isOK(o outcome) bool            { return o.FunctionError == "" }
func isFunctionError(o outcome) bool { return o.FunctionError != "" }

func mixItems() []item {
	return []item{
		tinyItem(), tinyItem(), tinyItem(),
		sizeItem(1 << 10),
		sizeItem(64 << 10),
		{name: "sleep5ms", payload: []byte(`{"sleep_ms":5}`), check: isOK},
		{name: "cpu1ms", payload: []byte(`{"cpu_ms":1}`), check: isOK},
		{name: "fail", payload: []byte(`{"fail":"demo failure"}`), check: isFunctionError},
	}
}

// parseSize reads 300, 1KiB, 6MiB, 1KB (1000), 2MB.
func parseSize(s string) (int, error) {
	units := []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"KB", 1000}, {"MB", 1000 * 1000}, {"B", 1}}
	num, mult := s, 1
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = v, u.mult
			break
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 300, 1KiB, 6MiB)", s)
	}
	return n * mult, nil
}

// formatSize writes n the way parseSize reads it, in the largest exact unit.
func formatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}
