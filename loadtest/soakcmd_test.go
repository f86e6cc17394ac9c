package main

import (
	"strings"
	"testing"
)

// TestSoakFlags: the soak's bootstrap is -lmigo, as compare's and run's;
// -bootstrap, the user's function elsewhere, is not a flag of the soak.
func TestSoakFlags(t *testing.T) {
	if err := soakMain(t.Context(), []string{"-lmigo", "/no/such/bootstrap", "-no-forms", "-duration", "0s"}); err == nil || !strings.Contains(err.Error(), "duration > 0") {
		t.Errorf("-lmigo: err %v, want the soak's own check of -duration", err)
	}
	if err := soakMain(t.Context(), []string{"-bootstrap", "/no/such/bootstrap"}); err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -bootstrap") {
		t.Errorf("-bootstrap: err %v, want it refused", err)
	}
}
