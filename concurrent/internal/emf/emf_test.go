package emf

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// TestRefused: what cannot be written is refused with its sentinel, and
// nothing is recorded.
func TestRefused(t *testing.T) {
	env := &Env{Namespace: "Shop", Service: "orders", Out: io.Discard, Limit: 32 << 10}
	full := NewSet(env)
	for i := range MaxDimensions - 1 { // service is the 30th
		if err := full.AddDimension("d"+strings.Repeat("x", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		set  *Set
		call func(s *Set) error
		want error
	}{
		{"NaN", NewSet(env), func(s *Set) error { return s.Add("m", "Count", false, math.NaN()) }, ErrInvalid},
		{"Inf", NewSet(env), func(s *Set) error { return s.Add("m", "Count", false, math.Inf(-1)) }, ErrInvalid},
		{"unit", NewSet(env), func(s *Set) error { return s.Add("m", "Parsecs", false, 1) }, ErrInvalid},
		{"empty name", NewSet(env), func(s *Set) error { return s.Add("", "Count", false, 1) }, ErrInvalid},
		{"long name", NewSet(env), func(s *Set) error { return s.Add(strings.Repeat("n", 256), "Count", false, 1) }, ErrInvalid},
		{"other unit", NewSet(env), func(s *Set) error {
			_ = s.Add("m", "Count", false, 1)
			return s.Add("m", "Seconds", false, 1)
		}, ErrInvalid},
		{"31st dimension", full, func(s *Set) error { return s.AddDimension("last", "v") }, ErrTooManyDimensions},
		{"dimension value", NewSet(env), func(s *Set) error { return s.AddDimension("k", "é") }, ErrInvalid},
		{"clash", NewSet(env), func(s *Set) error {
			_ = s.AddDimension("k", "v")
			return s.Add("k", "Count", false, 1)
		}, ErrInvalid},
		{"reserved", NewSet(env), func(s *Set) error { return s.AddMetadata("requestId", "x") }, ErrInvalid},
		{"metadata too large", NewSet(env), func(s *Set) error { return s.AddMetadata("k", strings.Repeat("x", maxFixed)) }, ErrTooLarge},
		{"no namespace", NewSet(&Env{}), func(s *Set) error { return s.Add("m", "Count", false, 1) }, ErrNoNamespace},
		{"ended", Ended, func(s *Set) error { return s.Add("m", "Count", false, 1) }, ErrInvocationEnded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(tt.set); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}
