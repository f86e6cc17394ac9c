//go:build !race

// The race detector doubles the stack guard and grows frames: the bound
// checked here is the one a bootstrap runs with.

package concurrent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lmigo/lmigo/cmd/bootstrap/demo"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"github.com/lmigo/lmigo/rapi/rapitest/rie"
)

// parkedStackBound is the most stack a slot may use while it waits for
// its next invocation. Go halves a parked goroutine's stack at a GC only
// while it uses less than a quarter of it, 800 bytes of guard included:
// below 1248 bytes, the 8 KiB a serving slot grows to goes back to 4 KiB
// after a burst.
const parkedStackBound = 2048 - 800 - 1

// TestParkedSlotStack: a slot parked on its next poll, after it served,
// uses less stack than parkedStackBound. Read from the goroutine dump of a
// child process (GOTRACEBACK=system gives each frame's stack pointer),
// which serves one invocation on each of its slots, waits until every
// other slot is parked, and ends itself with SIGQUIT.
func TestParkedSlotStack(t *testing.T) {
	if os.Getenv("LMIGO_TEST_STACK_CHILD") == "1" {
		parkedStackChild(t)
		return
	}
	ctx, cancel := testContext(t)
	defer cancel()
	// Built for another architecture (make test-arm64), the binary runs
	// through the same wrapper as the emulator's bootstrap.
	args := append(strings.Fields(os.Getenv(rie.ExecEnv)), os.Args[0], "-test.run=^TestParkedSlotStack$", "-test.count=1")
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "LMIGO_TEST_STACK_CHILD=1", "GOTRACEBACK=system")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || !strings.Contains(string(out), "SIGQUIT") {
		t.Fatalf("child: %v (%T), want its SIGQUIT dump:\n%s", err, ee, lastLines(out, 40))
	}
	parked, most := 0, uint64(0)
	for g := range strings.SplitSeq(string(out), "\n\n") {
		if !parkedSlot(g) {
			continue
		}
		parked++
		used := stackUsed(t, g)
		most = max(most, used)
		if used > parkedStackBound {
			t.Errorf("a parked slot uses %d bytes of stack, want at most %d:\n%s", used, parkedStackBound, g)
		}
	}
	t.Logf("%d slots parked, using at most %d bytes of stack (bound %d)", parked, most, parkedStackBound)
	if parked < 2 {
		t.Fatalf("%d slots parked on their next poll in the dump:\n%s", parked, lastLines(out, 80))
	}
}

var frameSP = regexp.MustCompile(`fp=0x([0-9a-f]+) sp=0x([0-9a-f]+)`)

// stackUsed is the stack a goroutine of a GOTRACEBACK=system dump uses:
// from the top of its stack to its innermost stack pointer. A stack of 4
// KiB or more is aligned to its size, so its top is its outermost frame's
// rounded up to 4 KiB (this goroutine's is: it grew past 2 KiB).
func stackUsed(t *testing.T, g string) uint64 {
	var hi, lo uint64
	for _, m := range frameSP.FindAllStringSubmatch(g, -1) {
		fp, err1 := strconv.ParseUint(m[1], 16, 64)
		sp, err2 := strconv.ParseUint(m[2], 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("frame %q", m[0])
		}
		hi = max(hi, fp)
		if lo == 0 || sp < lo {
			lo = sp
		}
	}
	if lo == 0 {
		t.Fatalf("no frame pointers in the dump (GOTRACEBACK=system):\n%s", g)
	}
	return (hi+4095)&^4095 - lo
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(string(b), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// parkedStackChild serves one invocation on each slot, all at once, with
// the demo handler growing its stack to 32 KiB and answering over 64 KiB
// (rapi's lazyMaxBody: the post's answer is read at once, and the slot
// parks on its queued poll, not on that answer), waits until every slot
// but the one serving the last invocation is parked on its next poll, and
// dumps every goroutine.
func parkedStackChild(t *testing.T) {
	const n = 8
	ctx, cancel := testContext(t)
	defer cancel()
	api := newAPI(t, rapitest.Options{MaxConcurrency: n})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n)},
		func(ctx context.Context, ev demo.Event) (json.RawMessage, error) {
			if ev.Fail == "dump" {
				waitParked(ctx, n-1)
				_ = syscall.Kill(os.Getpid(), syscall.SIGQUIT)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return demo.Handle(ctx, ev)
		})
	deep := fmt.Appendf(nil, `{"stack_kib":32,"gather":%d,"size":%d}`, n, 65<<10)
	done := make(chan error, n)
	for range n {
		go func() {
			r, err := api.Invoke(ctx, rapitest.Request{Payload: deep})
			if err == nil && r.Err != nil {
				err = r.Err
			}
			done <- err
		}()
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := api.WaitPolls(ctx, n); err != nil {
		t.Fatal(err)
	}
	_, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(`{"fail":"dump"}`)})
	t.Fatalf("the dump did not end the process: %v", err)
}

// waitParked returns once n slots' goroutines are parked on their next
// poll, or ctx ends.
func waitParked(ctx context.Context, n int) {
	buf := make([]byte, 1<<20)
	for ctx.Err() == nil {
		parked := 0
		for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if parkedSlot(g) {
				parked++
			}
		}
		if parked >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// parkedSlot reports whether goroutine dump g is a slot's, parked on its
// next poll (not on the answer to its last post, which ends within a
// second).
func parkedSlot(g string) bool {
	return strings.Contains(g, "concurrent.runSlot(") && strings.Contains(g, "[IO wait") &&
		strings.Contains(g, "(*Conn).Next") && !strings.Contains(g, "readLeft")
}
