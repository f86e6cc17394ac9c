package target

import (
	"slices"
	"testing"
)

// TestEventBootstraps: the realistic events have bootstraps of their own,
// told which event to answer.
func TestEventBootstraps(t *testing.T) {
	if lm, ref := bootstrapPkgs("event:s3"); lm != pkgEventsLmigo || ref != pkgEventsRef {
		t.Errorf("bootstrapPkgs(event:s3) = %s, %s", lm, ref)
	}
	if env := (Options{Event: "s3"}).Environ(1); !slices.Contains(env, "LOADTEST_EVENT=s3") {
		t.Errorf("bootstrapEnv for event:s3 lacks LOADTEST_EVENT: %v", env)
	}
}
