package events

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated testdata")

// TestTestdata keeps the generated payloads in step with their generator.
func TestTestdata(t *testing.T) {
	for file, gen := range map[string]func() []byte{
		"testdata/sqs-10.json":      genSQS,
		"testdata/github-push.json": genGitHub,
	} {
		want := gen()
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what its generator writes; go test ./rapi/rapitest/events -run TestTestdata -update", file)
		}
	}
}
