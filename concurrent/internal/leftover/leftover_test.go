package leftover

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// profile is a goroutine profile in its debug=1 form, as Go 1.26 writes
// it: a slot serving "live", a goroutine "live" started, two "done"
// started and one it detached, a connection pool's loop started under
// "done", and one whose stack was cut at the profile's depth.
var profile = `goroutine profile: total 9
2 @ 0x47a0ce 0x40f3a5 0x4c1d25 0x481e41
# labels: {"function":"orders", "requestId":"done"}
#	0x4c1d24	main.handler.func1+0x24	/src/main.go:21

1 @ 0x47a0ce 0x40f3a5 0x4c1d25 0x481e41
# labels: {"detached":"true", "function":"orders", "requestId":"done"}
#	0x4c1d24	github.com/lmigo/lmigo/concurrent.GoDetached.func1+0x64	/src/fanout.go:131

1 @ 0x47a0ce 0x40f3a5 0x4c1d25 0x481e41
# labels: {"function":"orders", "requestId":"done"}
#	0x6a5f3b	net/http.(*persistConn).readLoop+0xdbb	/go/src/net/http/transport.go:2395

1 @ 0x47a0ce 0x45f1c5 0x4c3e11 0x4c3d45 0x481e41
# labels: {"function":"orders", "requestId":"live"}
#	0x4c3e10	main.handler+0x30	/src/main.go:30
#	0x4c3d44	github.com/lmigo/lmigo/concurrent.runSlot+0x104	/src/slot.go:95

1 @ 0x47a0ce 0x40f3a5 0x4c1d25 0x481e41
# labels: {"function":"orders", "requestId":"live"}
#	0x4c1d24	main.handler.func1+0x24	/src/main.go:21

1 @ 0x47a0ce 0x40f3a5 0x4c1d25 0x481e42 0x481e43
# labels: {"function":"orders", "requestId":"deep \"quoted\""}
#	0x4c1d24	main.recurse+0x24	/src/main.go:40

2 @ 0x47a0ce 0x40f3a5
#	0x40f3a4	github.com/lmigo/lmigo/concurrent.runSlot+0x104	/src/slot.go:95

`

func TestParser(t *testing.T) {
	// Written in pieces that cut lines, as a writer may be handed them.
	p := parser{depth: 5, out: map[string]*Count{}}
	for chunk := range slicesOf(profile, 7) {
		if n, err := p.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	p.flush()
	want := map[string]Count{
		"done":          {Leftover: 2, Detached: 1},
		"live":          {Slot: 1, Leftover: 1},
		`deep "quoted"`: {Unsure: 1},
	}
	if len(p.out) != len(want) {
		t.Errorf("found %d request IDs, want %d: %v", len(p.out), len(want), p.out)
	}
	for id, w := range want {
		if c := p.out[id]; c == nil || *c != w {
			t.Errorf("%s: %+v, want %+v", id, c, w)
		}
	}
	if !p.out["done"].Ended() || p.out["live"].Ended() || p.out[`deep "quoted"`].Ended() {
		t.Errorf("Ended: done %v, live %v, deep %v; want true, false, false",
			p.out["done"].Ended(), p.out["live"].Ended(), p.out[`deep "quoted"`].Ended())
	}
}

func slicesOf(s string, n int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for len(s) > n {
			if !yield(s[:n]) {
				return
			}
			s = s[n:]
		}
		yield(s)
	}
}

func TestStackDepth(t *testing.T) {
	for godebug, want := range map[string]int{
		"":                                  128,
		"profstackdepth=32":                 32,
		"madvdontneed=1, profstackdepth=64": 64,
		"profstackdepth=x":                  128,
		"profstackdepth=0":                  128,
	} {
		if got := stackDepth(godebug); got != want {
			t.Errorf("stackDepth(%q) = %d, want %d", godebug, got, want)
		}
	}
}

// TestScan reads this process's goroutines: two started under an
// invocation's labels, blocked, one of them detached.
func TestScan(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 2)
	ctx := pprof.WithLabels(context.Background(), pprof.Labels(KeyFunction, "f", KeyRequestID, "scan-test"))
	pprof.Do(ctx, pprof.Labels(), func(ctx context.Context) {
		go func() { started <- struct{}{}; <-release }()
		pprof.Do(ctx, pprof.Labels(KeyDetached, "true"), func(context.Context) {
			go func() { started <- struct{}{}; <-release }()
		})
	})
	pprof.SetGoroutineLabels(context.Background()) // Do left the outer ctx's labels on
	<-started
	<-started
	found, err := Scan()
	if err != nil {
		t.Fatal(err)
	}
	if c := found["scan-test"]; c == nil || *c != (Count{Leftover: 1, Detached: 1}) || !c.Ended() {
		t.Errorf("scan-test: %+v, want 1 left over and 1 detached", c)
	}
	for id := range found {
		if !strings.HasPrefix(id, "scan-test") {
			t.Errorf("a request ID no goroutine of the test carries: %q", id)
		}
	}
}
