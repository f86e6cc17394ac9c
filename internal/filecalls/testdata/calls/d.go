package calls

// D calls on round the loop.
func D() int { return E(nil) }
