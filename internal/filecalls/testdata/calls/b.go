package calls

// B calls A back, and takes t.Get as a value.
func B(n int) int {
	get := T{}.Get
	return A(n) + get()
}
