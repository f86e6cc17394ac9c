package lambdahttp_test

import (
	"testing"

	"github.com/panjf2000/ants/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// ants starts a default pool when it is imported.
	ants.Release()
	goleak.VerifyTestMain(m)
}
