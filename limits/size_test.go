package limits

import (
	"strings"
	"testing"
)

// TestSizeUnits: a size is bytes, or a decimal number with a binary (KiB,
// MiB, GiB) or decimal (KB, MB, GB) unit, as the README writes them.
func TestSizeUnits(t *testing.T) {
	tests := []struct {
		name, value string
		want        int
	}{
		{envBufferRetain, "1.5MiB", 1536 << 10},
		{envBufferRetain, "0.5KiB", 512},
		{envBufferRetain, "0.25 MiB", 256 << 10},
		{envBufferRetain, "2.50MiB", 2560 << 10},
		{envBufferRetain, "0.0625GiB", 64 << 20},
		{envBufferRetain, "0.001GB", 1000000},
		{envBufferRetain, "1.5KB", 1500},
		{envBufferRetain, "2.5mb", 2500000},
		{envBufferRetain, "1.0", 1},
		{envBufferRetain, "007KiB", 7 << 10},
		{envMaxResponse, "5.5MiB", 5632 << 10},
		{envMaxRequest, "0.005859375GiB", 6 << 20},
	}
	for _, tt := range tests {
		c, err := FromEnv(mapEnv(withAPI(map[string]string{tt.name: tt.value})))
		if err != nil {
			t.Errorf("%s=%q: %v", tt.name, tt.value, err)
			continue
		}
		got := map[string]int{envBufferRetain: c.BufferRetainBytes, envMaxRequest: c.MaxRequestBytes, envMaxResponse: c.MaxResponseBytes}[tt.name]
		if got != tt.want {
			t.Errorf("%s=%q: %d bytes, want %d", tt.name, tt.value, got, tt.want)
		}
	}
}

// TestSizeRefused: what is not a size, not a whole number of bytes, or
// out of range is refused with a reason that says which, for the variable
// that holds it.
func TestSizeRefused(t *testing.T) {
	tests := []struct{ name, value, reason string }{
		{envBufferRetain, "2GiB", "out of range (0..67108864 bytes)"},
		{envBufferRetain, "1 GB", "out of range"},
		{envMaxResponse, "6.5MiB", "out of range (1..6291556 bytes)"},
		{envBufferRetain, "-1.5MiB", "out of range"},
		{envBufferRetain, "99999999999999999999.5GiB", "out of range"},
		{envBufferRetain, "1.5", "not a whole number of bytes"},
		{envBufferRetain, "0.3KiB", "not a whole number of bytes"},
		{envBufferRetain, "1.0000001MiB", "not a whole number of bytes"},
		{envBufferRetain, "0.0000000000000000000000001KiB", "not a whole number of bytes"},
		{envBufferRetain, ".5MiB", "not a size"},
		{envBufferRetain, "1.MiB", "not a size"},
		{envBufferRetain, "1..5MiB", "not a size"},
		{envBufferRetain, "1.5.1MiB", "not a size"},
		{envBufferRetain, "1,5MiB", "not a size"},
		{envBufferRetain, "+1MiB", "not a size"},
		{envBufferRetain, "1e3", "not a size"},
		{envBufferRetain, "0x10", "not a size"},
		{envBufferRetain, "1M", "not a size"},
		{envBufferRetain, "1TiB", "not a size"},
		{envBufferRetain, "1 Mi B", "not a size"},
		{envBufferRetain, "NaN", "not a size"},
	}
	for _, tt := range tests {
		_, err := FromEnv(mapEnv(withAPI(map[string]string{tt.name: tt.value})))
		if err == nil {
			t.Errorf("%s=%q accepted", tt.name, tt.value)
			continue
		}
		ves := varErrors(t, err)
		if len(ves) != 1 || ves[0].Name != tt.name || ves[0].Value != tt.value || !strings.Contains(ves[0].Reason, tt.reason) {
			t.Errorf("%s=%q: %v, want one error for it saying %q", tt.name, tt.value, err, tt.reason)
		}
		if !strings.Contains(err.Error(), tt.name) {
			t.Errorf("%s=%q: the message %q does not name the variable", tt.name, tt.value, err)
		}
	}
}
