package lambdatest_test

import (
	"testing"

	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

// The package's own tests use the way its doc gives users; a child of
// TestVerifyTestMain first starts stand-ins, as a team's TestMain does.
func TestMain(m *testing.M) {
	startStandIns()
	lambdatest.VerifyTestMain(m)
}
