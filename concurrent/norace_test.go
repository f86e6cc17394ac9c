//go:build !race

package concurrent

// raceEnabled: the race detector allocates, so allocation gates skip.
const raceEnabled = false
