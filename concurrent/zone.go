package concurrent

import (
	"context"
	"os"

	"github.com/lmigo/lmigo/concurrent/internal/zone"
)

// AvailabilityZoneID returns the ID of the Availability Zone the
// environment runs in ("use1-az1"), from Lambda's metadata endpoint. A
// zone ID names the same zone in every account; a zone name may not.
//
// The first call reads the endpoint, bounded by 1 s; concurrent first
// calls share that request. The zone is then kept: later calls return at
// once and allocate nothing. A call waits at most until ctx ends.
// Outside Lambda it returns [ErrNoMetadata]. A failed read wraps
// [ErrMetadata], and is tried again after 30 s. It may be called from any
// goroutine, at init too.
func AvailabilityZoneID(ctx context.Context) (string, error) {
	return processZone.Get(ctx)
}

// processZone serves AvailabilityZoneID: the endpoint is the execution
// environment's, one per process.
var processZone = zone.NewReader(os.LookupEnv)
