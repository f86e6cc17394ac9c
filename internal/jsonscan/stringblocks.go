package jsonscan

import "encoding/binary"

// stringBlockSize is the unit of stringBlocks.
const stringBlockSize = 16

// stringBlocksGo is stringBlocks in Go: the length of the longest prefix
// of b made of whole 16-byte blocks none of whose bytes a string's
// contents stop at (stringStops: a quote, a backslash, a control byte or
// E2). The assembly versions (amd64 SSE2, arm64 NEON) must return exactly
// this (TestStringBlocks, FuzzStringBlocks).
func stringBlocksGo(b []byte) int {
	i := 0
	for i+stringBlockSize <= len(b) {
		if stringStops(binary.LittleEndian.Uint64(b[i:]))|stringStops(binary.LittleEndian.Uint64(b[i+8:])) != 0 {
			break
		}
		i += stringBlockSize
	}
	return i
}
