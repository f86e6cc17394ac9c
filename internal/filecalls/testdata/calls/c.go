package calls

// C starts a loop of three files: c.go, d.go, e.go.
func C() int { return D() }
