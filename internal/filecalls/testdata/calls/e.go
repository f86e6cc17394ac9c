package calls

// E closes the loop through a method value of an interface.
func E(g Getter) int {
	if g == nil {
		return C()
	}
	return g.Get()
}
