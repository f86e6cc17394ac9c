//go:build amd64 || arm64

package jsonscan

// stringBlocks is stringBlocksGo in assembly: 16 bytes compared at once
// against each class of stop, where the word-at-a-time loop of skipString
// takes 8 with a dozen operations. BenchmarkCompactJSON, amd64: see
// skipString.
//
//go:noescape
func stringBlocks(b []byte) int
