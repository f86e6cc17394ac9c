package sizing

// An execution environment is a loss system: an invocation that arrives
// while every one of its N slots is busy finds no poll and is throttled.
// Arrivals come at random, so N must leave room above the mean load.
// Erlang's loss formula (Erlang B) gives the share turned away; it holds
// for any distribution of the time a slot is held, given its mean.

// erlangB is the share of arrivals that n slots turn away at an offered
// load of a Erlangs (arrival rate × mean time a slot is held). It runs
// the recurrence B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)), which stays
// within [0, 1] at every step: no factorial, no power overflows.
func erlangB(n int, a float64) float64 {
	if a <= 0 {
		return 0
	}
	b := 1.0
	for k := 1; k <= n; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// erlangN is the fewest slots that turn away at most loss of the arrivals
// at a load of a Erlangs; most when even most turn away more.
func erlangN(a, loss float64, most int) int {
	if a <= 0 {
		return 1
	}
	b := 1.0
	for k := 1; k <= most; k++ {
		b = a * b / (float64(k) + a*b)
		if b <= loss {
			return k
		}
	}
	return most
}
