package concurrent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lmigo/lmigo/concurrent"
)

// A handler tags its work with the Availability Zone it runs in. Outside
// Lambda, as here, there is no metadata endpoint.
func ExampleAvailabilityZoneID() {
	handler := func(ctx context.Context, _ any) (string, error) {
		zone, err := concurrent.AvailabilityZoneID(ctx)
		switch {
		case errors.Is(err, concurrent.ErrNoMetadata):
			return "no zone outside Lambda", nil
		case err != nil:
			return "", err // the endpoint failed: ErrMetadata
		}
		return "served in " + zone, nil
	}
	answer, _ := handler(context.Background(), nil)
	fmt.Println(answer)
	// Output: no zone outside Lambda
}
