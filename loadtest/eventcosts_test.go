package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/sizing"
)

// TestSizeEventCosts: sized with a directory of events, size shows what
// each file's events cost at N=1.
func TestSizeEventCosts(t *testing.T) {
	bin, data := fixture(t, "streambatch")
	jsonOut := filepath.Join(t.TempDir(), "size.json")
	var out bytes.Buffer
	err := sizeCommand(t.Context(), []string{"-bootstrap", bin, "-events", filepath.Join(data, "events"), "-target", "fake",
		"-max-n", "2", "-step", "1s", "-check=false", "-json", jsonOut, "-out", ""}, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	b, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		WallMS float64            `json:"wallMsPerInvocation"`
		Steps  []sizing.Step      `json:"steps"`
		Costs  []sizing.EventCost `json:"eventCosts"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) == 0 || p.WallMS != p.Steps[0].MeanMS {
		t.Errorf("wall %v ms, want the mean at N=1 (%+v)", p.WallMS, p.Steps)
	}
	if len(p.Costs) != 10 {
		t.Fatalf("costs of %d files, want 10: %+v", len(p.Costs), p.Costs)
	}
	for _, c := range p.Costs {
		if c.Invocations == 0 || !strings.Contains(out.String(), c.File) {
			t.Errorf("file %s: %d invocations; the report shows it: %v", c.File, c.Invocations, strings.Contains(out.String(), c.File))
		}
	}
	if !strings.Contains(out.String(), "At N=1, one invocation at a time, the wall time was: mean ") {
		t.Errorf("the report does not say how costs spread:\n%s", out.String())
	}
}
