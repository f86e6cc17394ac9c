package logline

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// cutMarkRE is the mark a cut value or line ends with.
var cutMarkRE = regexp.MustCompile(`…\[cut [0-9]+ bytes\]`)

// TestCutJSONLineShapes: objects of many shapes (long and short strings
// with escapes and multi-byte characters, keys, nested objects, arrays of
// numbers), cut to small bounds: the result fits, is one valid JSON object
// and is marked.
func TestCutJSONLineShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runes := []rune("aé日😀\"\\<>&\x01\n\u2028 ")
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		return b.String()
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(6); {
		case k == 0 && depth < 2:
			m := map[string]any{}
			for range rng.IntN(8) {
				m[text(1+rng.IntN(100))] = value(depth + 1)
			}
			return m
		case k == 1 && depth < 2:
			a := make([]any, rng.IntN(100))
			for i := range a {
				a[i] = value(depth + 1)
			}
			return a
		case k == 2:
			return rng.Float64() * 1e12
		case k == 3:
			return text(rng.IntN(3000 >> (3 * depth))) // long strings high up
		}
		return text(rng.IntN(40))
	}
	for i := range 100 {
		obj := map[string]any{"level": "INFO", "message": text(rng.IntN(2000))}
		for range rng.IntN(20) {
			obj[text(1+rng.IntN(20))] = value(0)
		}
		line, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		line = append(line, '\n')
		for _, limit := range []int{200, 1 << 10, 8 << 10} {
			if len(line) <= limit {
				continue
			}
			got := CutJSONLine(line, limit)
			if len(got) > limit || !utf8.Valid(got) || !json.Valid(got) || !cutMarkRE.Match(got) || got[len(got)-1] != '\n' {
				t.Fatalf("object %d cut to %d: %d bytes, valid %v: %.300q", i, limit, len(got), json.Valid(got), got)
			}
		}
	}
}
