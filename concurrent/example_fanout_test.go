package concurrent_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/lmigo/lmigo/concurrent"
)

// A handler fans out with Go and collects with Wait. Under the runtime
// each function runs on its own goroutine and a panic fails only its
// invocation; called with a plain context, as here, Go runs it at once.
func ExampleGo() {
	handler := func(ctx context.Context, ids []string) (string, error) {
		names := make([]string, len(ids))
		for i, id := range ids {
			if err := concurrent.Go(ctx, func(ctx context.Context) error {
				names[i] = strings.ToUpper(id) // a lookup of id, say
				return nil
			}); err != nil {
				return "", err
			}
		}
		if err := concurrent.Wait(ctx); err != nil {
			return "", err
		}
		return strings.Join(names, ","), nil
	}
	fmt.Println(handler(context.Background(), []string{"a", "b"}))
	// Output: A,B <nil>
}
