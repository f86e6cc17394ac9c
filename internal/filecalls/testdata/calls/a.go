// Package calls is a package of known shape for filecalls' tests: a.go
// and b.go call each other, c.go, d.go and e.go make a loop with no pair
// in it, and leaf.go calls nothing.
package calls

// A calls B in b.go, which calls back.
func A(n int) int {
	if n <= 0 {
		return leaf()
	}
	return B(n - 1)
}
