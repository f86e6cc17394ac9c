package show

import (
	"fmt"
	"time"
)

// Latency writes microseconds in a unit that suits them.
func Latency(us float64) string {
	d := time.Duration(us * 1e3)
	switch {
	case d < 10*time.Microsecond:
		return fmt.Sprintf("%.1fµs", us)
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", us)
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", us/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", us/1e3)
	}
	return fmt.Sprintf("%.2fs", us/1e6)
}

// Millis writes milliseconds as Latency does microseconds.
func Millis(ms float64) string { return Latency(ms * 1e3) }

// MiB writes mebibytes, to a tenth below 100.
func MiB(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f MiB", v)
	}
	return fmt.Sprintf("%.0f MiB", v)
}

// MiBDelta writes a difference of mebibytes with its sign.
func MiBDelta(v float64) string {
	if v > -100 && v < 100 {
		return fmt.Sprintf("%+.1f MiB", v)
	}
	return fmt.Sprintf("%+.0f MiB", v)
}

// MS writes milliseconds to a tenth.
func MS(v float64) string { return fmt.Sprintf("%.1fms", v) }

// Count writes a count, or a rate, without decimals.
func Count(v float64) string { return fmt.Sprintf("%.0f", v) }

// One writes v to a tenth, or to a hundredth below 0.1.
func One(v float64) string {
	if v != 0 && v < 0.1 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// Pct writes a percentage as One writes v.
func Pct(v float64) string { return One(v) + "%" }

// Ratio writes a ratio as a factor: 1.20x, 12x.
func Ratio(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0fx", v)
	}
	return fmt.Sprintf("%.2fx", v)
}

// Abbreviate is b, cut to n bytes and marked "..." when longer.
func Abbreviate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

// Duration is a time.Duration written as "1.5s" in JSON.
type Duration time.Duration

// MarshalText writes d as time.Duration's String does.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}
