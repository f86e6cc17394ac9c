package measure

import (
	"testing"
	"time"
)

func TestParseBusy(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  100 5 20 9000 30 1 2 40 50 0\ncpu0 50 2 10 4500 15 0 1 20 25 0\n", 1280 * time.Millisecond},
		{"cpu  1 2 3\n", 0},
		{"intr 1 2 3 4 5 6 7 8\n", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := parseBusy([]byte(tt.in)); got != tt.want {
			t.Errorf("parseBusy(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	b := []byte("MemTotal:        8048488 kB\nMemFree:          512000 kB\nMemAvailable:    4096000 kB\n")
	if v, err := parseMeminfo(b, "MemAvailable"); err != nil || v != 4096000 {
		t.Errorf("MemAvailable = %v, %v", v, err)
	}
	if v, err := parseMeminfo(b, "MemTotal"); err != nil || v != 8048488 {
		t.Errorf("MemTotal = %v, %v", v, err)
	}
	if _, err := parseMeminfo(b, "SwapTotal"); err == nil {
		t.Error("a figure that is not there read")
	}
}

// TestMachine reads this machine: it is busy by now, and has memory.
func TestMachine(t *testing.T) {
	if MachineBusy() <= 0 {
		t.Error("the machine has spent no CPU time")
	}
	if v, err := MemAvailableMiB(); err != nil || v <= 0 {
		t.Errorf("MemAvailable %v MiB, %v", v, err)
	}
	if v, err := MemTotalMB(); err != nil || v <= 0 {
		t.Errorf("MemTotal %v MB, %v", v, err)
	}
}
