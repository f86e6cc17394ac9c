//go:build !amd64 && !arm64

package concurrent

func stringBlocks(b []byte) int { return stringBlocksGo(b) }
