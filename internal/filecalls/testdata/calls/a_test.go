package calls

func testOnly() int { return A(0) + C() + leaf() + kept + D() }
