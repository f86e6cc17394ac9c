package jsonscan

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestStringBlocks: the assembly agrees with stringBlocksGo for every byte
// value at every place of the first three blocks, on every length up to
// them, and on long random bodies with stops sprinkled in; and the Go
// version stops exactly at the first block holding a stop.
func TestStringBlocks(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		if got, want := stringBlocks(b), stringBlocksGo(b); got != want {
			t.Fatalf("stringBlocks %d, stringBlocksGo %d, for %q", got, want, b)
		}
	}
	base := bytes.Repeat([]byte("x"), 3*stringBlockSize+5)
	for n := 0; n <= len(base); n++ {
		check(base[:n])
	}
	for c := range 256 {
		for at := range len(base) {
			b := bytes.Clone(base)
			b[at] = byte(c)
			check(b)
			check(b[:at+1])
			stop := c == '"' || c == '\\' || c < 0x20 || c == 0xE2
			want := len(b) / stringBlockSize * stringBlockSize
			if stop {
				want = at / stringBlockSize * stringBlockSize
			}
			if got := stringBlocksGo(b); got != want {
				t.Fatalf("byte %#x at %d: stringBlocksGo %d, want %d", c, at, got, want)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		b := make([]byte, r.IntN(4096))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x5f)) // printable ASCII
			if b[i] == '"' || b[i] == '\\' {
				b[i] = 'y'
			}
		}
		for range r.IntN(3) {
			if len(b) > 0 {
				b[r.IntN(len(b))] = []byte{'"', '\\', 0x00, 0x1f, 0xE2, 0x80, 0xff}[r.IntN(7)]
			}
		}
		check(b)
	}
}

func FuzzStringBlocks(f *testing.F) {
	f.Add([]byte(`"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"`))
	f.Add([]byte("\xe2\x80\xa8 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := stringBlocks(b), stringBlocksGo(b); got != want {
			t.Fatalf("stringBlocks %d, stringBlocksGo %d", got, want)
		}
	})
}
