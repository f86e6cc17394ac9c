//go:build !race

package zone

// raceEnabled: the race detector allocates, so allocation gates skip.
const raceEnabled = false
