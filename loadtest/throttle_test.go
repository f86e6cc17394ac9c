package main

import (
	"flag"
	"io"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

// parseFlags parses args into the bench's default settings with the flags
// run and compare share.
func parseFlags(args ...string) (*bench.Settings, error) {
	s := bench.DefaultSettings()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	registerBench(fs, &s)
	_, err := parseBench(fs, args, &s)
	return &s, err
}

func TestOnThrottleDefault(t *testing.T) {
	for where, want := range map[string]string{target.RIE: bench.ThrottleNext, target.Fake: bench.ThrottleRetry, target.Lambda: bench.ThrottleRetry} {
		s, err := parseFlags("-target", where)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if s.OnThrottle != want {
			t.Errorf("-target %s: -on-throttle %q, want %q", where, s.OnThrottle, want)
		}
	}
	if _, err := parseFlags("-on-throttle", "drop"); err == nil {
		t.Error("-on-throttle drop accepted")
	}
}

func TestExtraRuntimes(t *testing.T) {
	base := []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}}
	rie := bench.Settings{Options: target.Options{Target: target.RIE}}
	rts, err := extraRuntimes(&compareConfig{Settings: rie, Extra: []string{"lmigo-x=/bin/x", "other=/bin/y"}}, base)
	if err != nil || len(rts) != 4 || rts[2] != (target.Runtime{Name: "lmigo-x", Binary: "/bin/x", SurvivesPanic: true}) || rts[3].SurvivesPanic {
		t.Errorf("got %+v, %v", rts, err)
	}
	for _, bad := range []string{"x", "=/bin/x", "lmigo=/bin/x"} {
		if _, err := extraRuntimes(&compareConfig{Settings: rie, Extra: []string{bad}}, base); err == nil {
			t.Errorf("-extra %q accepted", bad)
		}
	}
}
