package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// refCompact is the definition Compact implements: no whitespace
// outside strings, no U+2028 or U+2029 inside them, and json.Valid.
func refCompact(b []byte) bool {
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
			if c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8 {
				return false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return json.Valid(b)
}

var compactCases = []string{
	``, `1`, `-`, `-0`, `01`, `-01`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e+5`, `1E-05`, `1.5e3`, `-1.0E+2`, `123abc`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `nulll`,
	`""`, `"`, `"abc`, `"a\"b"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\u00e9"`, `"\u00g9"`, `"\u12"`, `"\x"`, "\"\x01\"", "\"\x7f\xff\xfe\"", "\"\u2028\"", "\"a\u2029b\"", "\"\xe2\x80\xaa\"", "\"\xe2\x80\"",
	`{}`, `[]`, `{`, `[`, `}`, `]`, `[1,2]`, `[1,]`, `[,1]`, `[1 ,2]`, `{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{1:2}`,
	`{"a":[1,{"b":null}],"c":"d"}`, `[{]`, `[}`, `{]`, `{"a":1]`, `[1}`, `[[[]]]`, `[[[]]`, `[]]`, `1 `, ` 1`, "[1,\n2]",
	`"x" "y"`, `1 2`, `{}{}`, `[]1`, `{"a" :1}`, `"a b"`, `{"a b":"c d"}`,
}

func TestCompactJSON(t *testing.T) {
	cases := append([]string(nil), compactCases...)
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases = append(cases, deep(64), deep(65), deep(10000), deep(10001), strings.Repeat(`{"a":`, 10000)+"1"+strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001)+"1"+strings.Repeat("}", 10001))
	cases = append(cases, compactBoundaryCases()...)
	for _, c := range cases {
		if got, want := Compact([]byte(c)), refCompact([]byte(c)); got != want {
			t.Errorf("Compact(%.40q) = %v, json.Valid without whitespace says %v", c, got, want)
		}
	}
}

func FuzzCompactJSON(f *testing.F) {
	for _, c := range compactCases {
		f.Add([]byte(c))
	}
	// The boundary cases closed or cut off at the end of the input (the
	// test runs all 3888): all of them took the fuzzer over a minute of
	// baseline on this 2-core machine.
	for _, c := range compactBoundaryCases() {
		if !strings.HasPrefix(c, "{") && !strings.HasSuffix(c, "y") && !strings.HasSuffix(c, `y"`) {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Compact(b), refCompact(b); got != want {
			t.Fatalf("Compact(%q) = %v, json.Valid without whitespace says %v", b, got, want)
		}
	})
}

// compactBoundaryCases put each byte that skipString must stop at, and
// some it must not, at every offset 0..17 of a string's contents, so on
// each side of its first and second word, before 0, 1, 8 or 9 more bytes;
// each closed, inside an object, and cut off at the end of the input.
func compactBoundaryCases() []string {
	stops := []string{
		``, `"`, `\"`, `\\`, `\n`, `\u00e9`, `\u00`, `\`, "\x00", "\x1f", "\x7f", "\x80é",
		"\u2028", "\u2029", "\xe2\x80\xaa", "\xe2\x80", "\xe2", "\xe2\x80\xa8\xe2",
	}
	var cases []string
	for pre := 0; pre <= 17; pre++ {
		for _, stop := range stops {
			for _, post := range []int{0, 1, 8, 9} {
				s := strings.Repeat("x", pre) + stop + strings.Repeat("y", post)
				cases = append(cases, `"`+s+`"`, `{"a":"`+s+`","b":"z"}`, `"`+s)
			}
		}
	}
	return cases
}
