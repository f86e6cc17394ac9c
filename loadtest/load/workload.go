package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest/events"
)

// Item is one kind of invocation of a workload and the check of its answer.
type Item struct {
	Name    string
	Payload []byte
	Check   func(Outcome) bool
	// Group, when set, names the events file the item came from: the
	// load keeps the latency of each group apart (Stats.Groups).
	Group string
}

// Workload is what a run sends, on the demo contract of cmd/bootstrap/demo.
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
type Workload struct {
	Name  string
	Items []Item // cycled; nil for waves
	// Waves are a round of a waves workload (grow, stack:S): each item is
	// sent n times at once and held by the demo's gather until all n are
	// in; nil for the others.
	Waves func(n int) []Item
	// Warm is the warm-up of a waves workload, one invocation each, before
	// RSS is read the first time.
	Warm   []Item
	Panics bool
	Floor  bool // served by the floor (floorbootstrap): tiny, size:S and wait:D
}

// Waved says whether w is sent in waves, with RSS read before and after.
func (w Workload) Waved() bool { return w.Waves != nil }

// EventPrefix starts the workloads of realistic events.
const EventPrefix = "event:"

// growSizes are the response sizes of a grow round, smallest first.
var growSizes = []int{64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 6 << 20}

// ParseWorkload is the workload named s (see Workload).
func ParseWorkload(s string) (Workload, error) {
	switch s {
	case "tiny":
		return Workload{Name: s, Items: []Item{tinyItem()}, Floor: true}, nil
	case "mix", "mix-panic":
		w := Workload{Name: s, Items: mixItems()}
		if s == "mix-panic" {
			w.Items = append(w.Items, Item{Name: "panic", Payload: []byte(`{"panic":true}`), Check: isFunctionError})
			w.Panics = true
		}
		return w, nil
	case "grow":
		// The warm-up is one invocation of each size, so that the
		// handler's body cache holds every body before RSS is read the
		// first time: the cache is the handler's memory, and it is there
		// after the burst too.
		var warm []Item
		for _, size := range growSizes {
			warm = append(warm, sizeItem(size))
		}
		return Workload{Name: s, Warm: warm, Waves: func(n int) []Item {
			var wave []Item
			for _, size := range growSizes {
				it := sizeItem(size)
				it.Payload = sizePayload(size, n)
				wave = append(wave, it)
			}
			return wave
		}}, nil
	}
	if name, ok := strings.CutPrefix(s, EventPrefix); ok {
		ev, err := events.Get(name)
		if err != nil {
			return Workload{}, fmt.Errorf("workload %s: %w", s, err)
		}
		return Workload{Name: s, Items: []Item{{Name: s, Payload: ev.Payload, Check: func(o Outcome) bool {
			return o.FunctionError == "" && json.Valid(o.Body)
		}}}}, nil
	}
	if v, ok := strings.CutPrefix(s, "wait:"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Millisecond || d%time.Millisecond != 0 || d > time.Minute {
			return Workload{}, fmt.Errorf("workload %s: want a wait of whole milliseconds, 1ms to 1m (wait:20ms)", s)
		}
		return Workload{Name: s, Items: []Item{waitItem(d)}, Floor: true}, nil
	}
	if v, ok := strings.CutPrefix(s, "stack:"); ok {
		n, err := ParseSize(v)
		if err != nil || n < 16<<10 || n > 1<<20 || n&(n-1) != 0 {
			return Workload{}, fmt.Errorf("workload %s: want a stack of a power of two, 16KiB to 1MiB (stack:32KiB)", s)
		}
		return Workload{Name: s, Warm: []Item{stackItem(n, 0)}, Waves: func(gather int) []Item {
			return []Item{stackItem(n, gather)}
		}}, nil
	}
	if v, ok := strings.CutPrefix(s, "size:"); ok {
		n, err := ParseSize(v)
		if err != nil {
			return Workload{}, err
		}
		if n < 2 || n > demo.MaxSize {
			return Workload{}, fmt.Errorf("workload %s: size out of range 2 B..6 MiB", s)
		}
		return Workload{Name: s, Items: []Item{sizeItem(n)}, Floor: true}, nil
	}
	return Workload{}, fmt.Errorf("unknown workload %q (tiny, size:S, wait:D, mix, mix-panic, grow, stack:S, event:NAME)", s)
}

func tinyItem() Item {
	return Item{Name: "tiny", Payload: []byte(`{}`), Check: func(o Outcome) bool {
		return o.FunctionError == "" && bytes.HasPrefix(o.Body, []byte(`{"ok":true`))
	}}
}

// waitItem waits d in the handler, then answers as tiny.
func waitItem(d time.Duration) Item {
	it := tinyItem()
	it.Name, it.Payload = "wait"+d.String(), fmt.Appendf(nil, `{"sleep_ms":%d}`, d.Milliseconds())
	return it
}

// stackItem grows the handler's stack to n bytes; gather > 1 holds the
// invocation until gather of them are in the handler at once.
func stackItem(n, gather int) Item {
	it := tinyItem()
	it.Name, it.Payload = "stack"+FormatSize(n), fmt.Appendf(nil, `{"stack_kib":%d}`, n>>10)
	if gather > 1 {
		it.Payload = fmt.Appendf(nil, `{"stack_kib":%d,"gather":%d}`, n>>10, gather)
	}
	return it
}

func sizeItem(n int) Item {
	return Item{Name: FormatSize(n), Payload: sizePayload(n, 0), Check: func(o Outcome) bool {
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

func isOK(o Outcome) bool            { return o.FunctionError == "" }
func isFunctionError(o Outcome) bool { return o.FunctionError != "" }

func mixItems() []Item {
	return []Item{
		tinyItem(), tinyItem(), tinyItem(),
		sizeItem(1 << 10),
		sizeItem(64 << 10),
		{Name: "sleep5ms", Payload: []byte(`{"sleep_ms":5}`), Check: isOK},
		{Name: "cpu1ms", Payload: []byte(`{"cpu_ms":1}`), Check: isOK},
		{Name: "fail", Payload: []byte(`{"fail":"demo failure"}`), Check: isFunctionError},
	}
}

// ParseSize reads 300, 1KiB, 6MiB, 1KB (1000), 2MB.
func ParseSize(s string) (int, error) {
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

// FormatSize writes n the way parseSize reads it, in the largest exact unit.
func FormatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}
