package lambdatest_test

import (
	"testing"

	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

// The package's own tests use the way its doc gives users.
func TestMain(m *testing.M) {
	lambdatest.VerifyTestMain(m)
}
