package calls

// Getter's Get counts where Getter is declared, not where T implements it.
type Getter interface{ Get() int }

// T implements Getter.
type T struct{}

// Get is a method.
func (T) Get() int { return 1 }

func leaf() int { return 0 }

// kept is used only by the test file and the ignored file.
var kept = 1
