package measure_test

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lmigo/lmigo/loadtest/measure"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    measure.CPU
		wantErr bool
	}{
		{
			name: "plain",
			in:   "4242 (bootstrap) S 1 4242 4242 0 -1 4194560 1011 0 0 0 150 37 0 0 20 0 9 0 12345 1234567 890 18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 0 0 0 0 0 0",
			want: measure.CPU{User: 1500 * time.Millisecond, System: 370 * time.Millisecond},
		},
		{
			name: "command with spaces and parentheses",
			in:   "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1",
			want: measure.CPU{User: 30 * time.Millisecond, System: 40 * time.Millisecond},
		},
		{name: "no parenthesis", in: "7 bootstrap R 1", wantErr: true},
		{name: "too short", in: "7 (x) R 1 2 3", wantErr: true},
		{name: "not a number", in: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 x 4 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := measure.ParseStat([]byte(tt.in))
			if tt.wantErr {
				if !errors.Is(err, measure.ErrFormat) {
					t.Fatalf("err = %v, want ErrFormat", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseStat = %+v, %v; want %+v", got, err, tt.want)
			}
			if got.Total() != tt.want.User+tt.want.System {
				t.Fatalf("Total = %v", got.Total())
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	in := "Name:\tbootstrap\nVmPeak:\t 1277624 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t5\nCpus_allowed_list:\t0\n"
	got, err := measure.ParseStatus([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := measure.Status{RSS: 10 << 20, Peak: 20 << 20, CPUs: "0"}
	if got != want {
		t.Fatalf("ParseStatus = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"Name:\tzombie\nState:\tZ\n", "VmHWM:\t12 MB\nVmRSS:\t1 kB\n", "VmHWM:\tx kB\nVmRSS:\t1 kB\n"} {
		if _, err := measure.ParseStatus([]byte(bad)); !errors.Is(err, measure.ErrFormat) {
			t.Errorf("ParseStatus(%q) err = %v, want ErrFormat", bad, err)
		}
	}
}

func TestReadSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	pid := os.Getpid()
	if _, err := measure.ReadCPU(pid); err != nil {
		t.Fatal(err)
	}
	st, err := measure.ReadStatus(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.RSS <= 0 || st.Peak < st.RSS || st.CPUs == "" {
		t.Fatalf("implausible status %+v", st)
	}
	s := measure.NewSampler(func() []int { return []int{pid, -1} }, time.Millisecond, time.Now())
	time.Sleep(10 * time.Millisecond)
	samples := s.Stop()
	if len(samples) < 2 {
		t.Fatalf("%d samples", len(samples))
	}
	for i, x := range samples {
		if x.RSS <= 0 || (i > 0 && x.At < samples[i-1].At) {
			t.Fatalf("bad sample %d: %+v", i, x)
		}
	}
}

func TestGCCounter(t *testing.T) {
	out := strings.Join([]string{
		"gc 1 @0.004s 2%: 0.010+0.28+0.003 ms clock, 0.020+0.1/0.2/0+0.006 ms cpu, 3->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P",
		`{"level":"INFO","msg":"gc 2 @ is not at the start"}`,
		"gc 2 @0.010s 3%: 0.01+0.2+0.003 ms clock, 0.02+0/0.1/0+0.006 ms cpu, 4->4->2 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)",
		"  gc 3 @1.5s 1%: ...",
		"gc x @1s",
		"gc 4@1s",
		"scvg: 1 MB released",
		"gc 10 @2.000s 1%: last line",
		"",
	}, "\n")
	// Byte by byte: lines split across writes must still count.
	var c measure.GCCounter
	for i := range len(out) {
		if _, err := c.Write([]byte{out[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Count(); got != 4 {
		t.Fatalf("Count = %d, want 4", got)
	}
	if !strings.Contains(c.Tail(), "scvg") {
		t.Fatalf("Tail lost output: %q", c.Tail())
	}
	big := strings.Repeat("x", 3*measure.TailBytes)
	_, _ = c.Write([]byte(big + "\ngc 11 @3s 1%:\n"))
	if c.Count() != 5 || len(c.Tail()) != measure.TailBytes {
		t.Fatalf("Count = %d, len(Tail) = %d", c.Count(), len(c.Tail()))
	}
}

func TestParseProcStat(t *testing.T) {
	in := "4242 (sh) S 1 4242 4242 0 -1 4194560 1011 0 0 0 150 37 220 13 20 0 1 0 12345 1234567 890"
	got, err := measure.ParseProcStat([]byte(in))
	want := measure.ProcStat{State: 'S', PGID: 4242,
		CPU:      measure.CPU{User: 1500 * time.Millisecond, System: 370 * time.Millisecond},
		Children: measure.CPU{User: 2200 * time.Millisecond, System: 130 * time.Millisecond}}
	if err != nil || got != want {
		t.Fatalf("ParseProcStat = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"7 (x) R 1 7 7 0 -1 0 0 0 0 0 3 4", "7 (x) R 1 x 7 0 -1 0 0 0 0 0 3 4 0 0", "7 (x) RR 1 7 7 0 -1 0 0 0 0 0 3 4 0 0"} {
		if _, err := measure.ParseProcStat([]byte(bad)); !errors.Is(err, measure.ErrFormat) {
			t.Errorf("ParseProcStat(%q) err = %v, want ErrFormat", bad, err)
		}
	}
}

// TestGroup: a shell in a process group of its own and its child are the
// group's members; their CPU and memory are read together; none is left
// once the group is killed.
func TestGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	defer func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	var members []int
	for len(members) < 2 { // until the shell has started its child
		if members = measure.GroupMembers(pgid); len(members) > 2 {
			t.Fatalf("members %v, want the shell and its sleep", members)
		}
		if dl, ok := t.Deadline(); ok && time.Until(dl) < time.Second {
			t.Fatalf("members %v, want the shell and its sleep", members)
		}
		runtime.Gosched()
	}
	if !slices.Contains(members, pgid) {
		t.Fatalf("members %v lack the leader %d", members, pgid)
	}
	if _, err := measure.ReadGroupCPU(members); err != nil {
		t.Error(err)
	}
	st, err := measure.ReadGroupStatus(members)
	one, _ := measure.ReadStatus(pgid)
	if err != nil || st.RSS <= one.RSS || st.Peak <= one.Peak {
		t.Errorf("group memory %+v (%v), not more than the leader's %+v", st, err, one)
	}
	if _, err := measure.ReadGroupCPU([]int{-1}); !errors.Is(err, measure.ErrNoProcess) {
		t.Errorf("no process: err %v", err)
	}
	if _, err := measure.ReadGroupStatus(nil); !errors.Is(err, measure.ErrNoProcess) {
		t.Errorf("no process: err %v", err)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = cmd.Wait()
	for len(measure.GroupMembers(pgid)) > 0 { // the sleep may take a moment to die
		if dl, ok := t.Deadline(); ok && time.Until(dl) < time.Second {
			t.Fatalf("members %v after SIGKILL", measure.GroupMembers(pgid))
		}
		runtime.Gosched()
	}
}
