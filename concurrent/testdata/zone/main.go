// Command zone is a bootstrap whose handler answers with the Availability
// Zone ID, for the emulator test of concurrent.AvailabilityZoneID.
package main

import (
	"context"

	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	concurrent.Start(func(ctx context.Context, _ any) (string, error) {
		return concurrent.AvailabilityZoneID(ctx)
	})
}
