package main

import (
	"os"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

func TestMain(m *testing.M) {
	lambdatest.VerifyTestMain(m)
}

// events are testdata/events.json's, one a line, as the load test reads
// them.
func events(t *testing.T) [][]byte {
	t.Helper()
	b, err := os.ReadFile("testdata/events.json")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for line := range strings.Lines(string(b)) {
		out = append(out, []byte(strings.TrimSpace(line)))
	}
	return out
}

func TestHandle(t *testing.T) {
	f := lambdatest.Start(t, handle)
	for _, ev := range events(t) {
		res := f.Invoke(ev)
		if res.Err != nil || !strings.Contains(string(res.Payload), `"sum":"`) || res.Leftover != 0 {
			t.Errorf("%s: %s, %v, %d goroutines left", ev, res.Payload, res.Err, res.Leftover)
		}
	}
	if res := f.Invoke([]byte(`{"rounds":1001}`)); res.Err == nil {
		t.Error("1001 rounds were taken")
	}
}

func TestIsolation(t *testing.T) {
	lambdatest.CheckIsolation(t, handle, events(t))
}

// TestProfile: CPU_PROFILE's file holds a CPU profile once stopped.
func TestProfile(t *testing.T) {
	path := t.TempDir() + "/cpu.pprof"
	stop, err := startProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	hash(10)
	stop()
	if b, err := os.ReadFile(path); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("not a gzipped profile: %d bytes, %v", len(b), err)
	}
}
