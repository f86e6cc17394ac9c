package pool

import (
	"testing"
	"time"

	"github.com/panjf2000/ants/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// ants starts a default pool, with its own goroutines, at import.
	_ = ants.ReleaseTimeout(5 * time.Second)
	goleak.VerifyTestMain(m)
}
