package metrics_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lmigo/lmigo/concurrent/metrics"
)

// A handler records its metrics from its context; the runtime writes them
// when the invocation ends. Outside an invocation, nothing is recorded.
func Example() {
	handler := func(ctx context.Context, order string) error {
		if err := metrics.AddDimension(ctx, "Operation", "checkout"); err != nil {
			return err
		}
		return metrics.Add(ctx, "Orders", metrics.Count, 1)
	}
	err := handler(context.Background(), "o-1")
	fmt.Println(errors.Is(err, metrics.ErrNoInvocation))
	// Output: true
}
