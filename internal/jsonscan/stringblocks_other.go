//go:build !amd64 && !arm64

package jsonscan

func stringBlocks(b []byte) int { return stringBlocksGo(b) }
