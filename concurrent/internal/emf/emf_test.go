package emf

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"
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

// lineWriter records the longest line written, newline included.
type lineWriter struct{ longest, lines int }

func (w *lineWriter) Write(b []byte) (int, error) {
	w.longest = max(w.longest, len(b))
	w.lines++
	return len(b), nil
}

// TestFlushLineBound: every document fits the line's limit, whatever the
// names: <, > and & encode to six bytes each, the worst case of a name.
func TestFlushLineBound(t *testing.T) {
	const limit = 32 << 10
	tests := []struct {
		name string
		char string
	}{
		{"plain", "n"},
		{"less than", "<"},
		{"greater than", ">"},
		{"ampersand", "&"},
		{"quote", `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &lineWriter{}
			env := &Env{Namespace: "Shop", Service: "orders", Out: out, Limit: limit}
			s := NewSet(env)
			if err := s.AddMetadata("k", strings.Repeat("x", maxFixed-64)); err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				name := fmt.Sprintf("%03d", i) + strings.Repeat(tt.char, maxName-3)
				for range MaxValues {
					if err := s.Add(name, "Count", false, -1.2345678901234567e-300); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := s.Flush("id", time.Unix(1, 0)); err != nil {
				t.Fatal(err)
			}
			if out.longest > limit {
				t.Errorf("a document of %d bytes, over the limit of %d (%d documents)", out.longest, limit, out.lines)
			}
		})
	}
}
