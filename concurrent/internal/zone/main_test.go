package zone

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no request's goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
