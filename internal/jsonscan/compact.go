// Package jsonscan checks a JSON document in one pass, reading string
// contents 16 bytes at a time (SSE2 on amd64, NEON on arm64, a word loop
// elsewhere): whether a json.RawMessage result can be sent as it is.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Compact reports whether b is one valid JSON value with no whitespace
// outside strings and no U+2028 or U+2029 inside them: exactly what
// json.Valid accepts (strings may hold any byte but controls, UTF-8
// unchecked; nesting up to encoding/json's 10000 levels), minus those.
// Such a value is what compacting leaves as it is. U+2028 and U+2029 are
// left to the encoder: encoding/json built with GOEXPERIMENT=jsonv2
// escapes them in a RawMessage, the default build does not.
//
// It is one pass with a tight loop over string contents, where large
// bodies spend their bytes: json.Valid's scanner steps a state function
// per byte and costs about what compaction does, which is the cost a
// json.RawMessage result sent direct is meant to avoid
// (BenchmarkResponse/rawmessage).
func Compact(b []byte) bool {
	const maxDepth = 10000 // encoding/json's maxNestingDepth
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' per open container
	i, n := 0, len(b)
	const (
		wantValue = iota
		wantKey
		afterValue
	)
	state := wantValue
	for {
		switch state {
		case wantValue:
			if i >= n {
				return false
			}
			switch c := b[i]; {
			case c == '{' || c == '[':
				if len(stack) == maxDepth {
					return false
				}
				i++
				closer := byte('}')
				if c == '[' {
					closer = ']'
				}
				if i < n && b[i] == closer {
					i++
					state = afterValue
					continue
				}
				stack = append(stack, c)
				if c == '{' {
					state = wantKey
				}
				continue
			case c == '"':
				if i = skipString(b, i+1); i < 0 {
					return false
				}
			case c == '-' || c >= '0' && c <= '9':
				if i = skipNumber(b, i); i < 0 {
					return false
				}
			case c == 't':
				if i = skipLiteral(b, i, "true"); i < 0 {
					return false
				}
			case c == 'f':
				if i = skipLiteral(b, i, "false"); i < 0 {
					return false
				}
			case c == 'n':
				if i = skipLiteral(b, i, "null"); i < 0 {
					return false
				}
			default:
				return false
			}
			state = afterValue
		case wantKey:
			if i >= n || b[i] != '"' {
				return false
			}
			if i = skipString(b, i+1); i < 0 || i >= n || b[i] != ':' {
				return false
			}
			i++
			state = wantValue
		case afterValue:
			if len(stack) == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			top := stack[len(stack)-1]
			switch b[i] {
			case ',':
				i++
				state = wantValue
				if top == '{' {
					state = wantKey
				}
			case '}', ']':
				if b[i] == '}' != (top == '{') {
					return false
				}
				i++
				stack = stack[:len(stack)-1]
			default:
				return false
			}
		}
	}
}

// skipString returns the index after the string whose contents start at
// i, or -1.
//
// It finds the next byte that needs a look (stringStops) 16 bytes at a
// time once a string is longer than a word (stringBlocks, in assembly on
// amd64 and arm64), a word at a time otherwise, and takes only that byte
// in the loop below. BenchmarkCompactJSON, 2 shared amd64 cores, medians
// of 6 interleaved runs: byte at a time -> word at a time: base64 6 MiB
// 1.16 -> 3.73 GiB/s, prose 6 MiB 0.90 -> 1.88 GiB/s, small objects 1 MiB
// 0.53 -> 0.63 GiB/s; word -> 16-byte blocks: base64 6 MiB 3.77 -> 18.2
// GiB/s, prose 1 MiB 2.76 -> 3.14 GiB/s, small objects 0.67 -> 0.69 GiB/s
// (no change within the noise); json.Valid 0.23-0.33 GiB/s on the same
// bodies. Four words per turn in Go reached 5.3 GiB/s on base64 and lost
// a fifth on prose and objects.
func skipString(b []byte, i int) int {
	for {
		// To the next byte that needs a look: the first word by the word,
		// so that a short string costs no call; past it 16 bytes at a
		// time (stringBlocks); then by the word again.
		if i+8 <= len(b) {
			m := stringStops(binary.LittleEndian.Uint64(b[i : i+8]))
			if m == 0 {
				i += 8 + stringBlocks(b[i+8:])
				for i+8 <= len(b) {
					if m = stringStops(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
						break
					}
					i += 8
				}
			}
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
			}
		}
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8: // U+2028, U+2029
			return -1
		default:
			i++
		}
	}
}

// stringStops returns a word whose lowest set bit is the high bit of the
// first byte of w (little-endian) that a string's contents must not skip:
// a quote, a backslash, a control byte, or E2 (U+2028's and U+2029's first
// byte); 0 if there is none. Bits above the lowest may be false (a borrow
// out of a byte that matched), so only the lowest is to be read.
//
// A byte v is 0 when (v-1) &^ v has its high bit set, and below 0x20 when
// (v-0x20) &^ v has; for a byte below 0x80 the &^ v is needed only against
// a byte of 0x80 or more, so the three ASCII tests share one.
func stringStops(w uint64) uint64 {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	q := w ^ ('"' * ones)
	bs := w ^ ('\\' * ones)
	e2 := w ^ (0xE2 * ones)
	ascii := (q - ones) | (bs - ones) | (w - 0x20*ones)
	return (ascii&^w | (e2-ones)&^e2) & high
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber returns the index after the number starting at i, or -1.
func skipNumber(b []byte, i int) int {
	n := len(b)
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= n:
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return -1
	}
	if i < n && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// skipLiteral returns the index after lit at i, or -1.
func skipLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
