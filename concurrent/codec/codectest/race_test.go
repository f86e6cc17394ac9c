//go:build race

package codectest

// raceEnabled: the race detector allocates, so allocation gates skip.
const raceEnabled = true
