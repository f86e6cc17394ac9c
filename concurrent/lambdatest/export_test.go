package lambdatest

// ServedAlone tells a test's stand-ins whether this process is a child of
// CheckIsolation serving one event alone.
func ServedAlone() bool {
	tk, ok := childTask()
	return ok && tk.Alone >= 0
}

// IsChild tells whether this process is a child of CheckIsolation.
func IsChild() bool {
	_, ok := childTask()
	return ok
}

// Labels names events as CheckIsolation's failures do.
func Labels(events [][]byte) []string { return labels(events) }
