package show

import (
	"testing"
	"time"
)

func TestFigures(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{Latency(4.25), "4.2µs"},
		{Latency(190), "190µs"},
		{Latency(5600), "5.60ms"},
		{Latency(21500), "21.5ms"},
		{Latency(2.5e6), "2.50s"},
		{Millis(17.4), "17.4ms"},
		{Millis(0.058), "58µs"},
		{MiB(10.44), "10.4 MiB"},
		{MiB(1517), "1517 MiB"},
		{MiBDelta(-3), "-3.0 MiB"},
		{MiBDelta(250), "+250 MiB"},
		{MS(4.46), "4.5ms"},
		{Count(999.6), "1000"},
		{One(0), "0.0"},
		{One(0.05), "0.05"},
		{One(1.25), "1.2"},
		{Pct(0.15), "0.1%"},
		{Ratio(1.2), "1.20x"},
		{Ratio(12.4), "12x"},
		{Abbreviate([]byte("abcdef"), 3), "abc..."},
		{Abbreviate([]byte("abc"), 3), "abc"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestDuration(t *testing.T) {
	if b, err := Duration(1500 * time.Millisecond).MarshalText(); err != nil || string(b) != "1.5s" {
		t.Errorf("MarshalText = %q, %v", b, err)
	}
}
