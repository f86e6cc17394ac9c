package measure

import (
	"math"
	"strings"
	"testing"
)

// A perf script of four samples of 500 µs: one under runtime.stopm (the
// kernel's futex wait below it), one under runtime.startm, one in the
// handler, one without a call chain.
const perfScript = `    500250 
	ffffffff821fa71a __schedule
	ffffffff81441416 futex_do_wait
	           7e063 runtime.futex.abi0
	           18b27 runtime.notesleep
	           4bcac runtime.stopm
	           4d868 runtime.findRunnable
	           4e9b1 runtime.schedule

    500250 
	           7e063 runtime.futex.abi0
	           18b27 runtime.notewakeup
	           4bcac runtime.startm
	           4d868 runtime.wakep
	           4e9b1 runtime.ready

    500250 
	           851a5 main.main
	           46f35 runtime.main

    500250            7c521 runtime.goexit.abi0
`

func TestParsePerfScript(t *testing.T) {
	for _, tt := range []struct {
		name, in             string
		samples              int
		startm, stopm, sched float64
		err                  string
	}{
		{name: "shares", in: perfScript, samples: 4, startm: 25, stopm: 25, sched: 50},
		{name: "both in one sample", in: "100\n\t1 runtime.stopm\n\t2 runtime.startm\n\n300\n\t3 runtime.main\n", samples: 2, startm: 25, stopm: 25, sched: 25},
		{name: "no symbols", in: "100\n\t7e063 [unknown]\n\t18b27 [unknown]\n", err: "no Go symbols"},
		{name: "no samples", in: "", err: "no samples"},
		{name: "garbage", in: "perf: not a sample\n", err: "without its period"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePerfScript(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if err != nil || got.Samples != tt.samples || !near(got.Startm, tt.startm) || !near(got.Stopm, tt.stopm) || !near(got.Sched, tt.sched) {
				t.Errorf("%+v, %v; want %d samples, startm %v%%, stopm %v%%, either %v%%", got, err, tt.samples, tt.startm, tt.stopm, tt.sched)
			}
		})
	}
}
