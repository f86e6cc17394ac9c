//go:build ignore

package calls

func ignored() int { return A(0) + C() + leaf() + kept }
