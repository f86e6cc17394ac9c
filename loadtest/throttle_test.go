package main

import (
	"flag"
	"io"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

// parseFlags parses args into the default config with the common flags.
func parseFlags(args ...string) (*config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.register(fs)
	return cfg, cfg.parse(fs, args)
}

func TestOnThrottleDefault(t *testing.T) {
	for where, want := range map[string]string{target.RIE: bench.ThrottleNext, target.Fake: bench.ThrottleRetry, target.Lambda: bench.ThrottleRetry} {
		args := []string{"-target", where}
		if where == target.Lambda {
			args = append(args, "-function", "f")
		}
		cfg, err := parseFlags(args...)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if cfg.OnThrottle != want {
			t.Errorf("-target %s: -on-throttle %q, want %q", where, cfg.OnThrottle, want)
		}
	}
	if _, err := parseFlags("-on-throttle", "drop"); err == nil {
		t.Error("-on-throttle drop accepted")
	}
}

func TestExtraRuntimes(t *testing.T) {
	base := []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}}
	rts, err := extraRuntimes(&config{Settings: bench.Settings{Options: target.Options{Target: target.RIE}}, Extra: []string{"lmigo-x=/bin/x", "other=/bin/y"}}, base)
	if err != nil || len(rts) != 4 || rts[2] != (target.Runtime{Name: "lmigo-x", Binary: "/bin/x", SurvivesPanic: true}) || rts[3].SurvivesPanic {
		t.Errorf("got %+v, %v", rts, err)
	}
	for _, bad := range []string{"x", "=/bin/x", "lmigo=/bin/x"} {
		if _, err := extraRuntimes(&config{Settings: bench.Settings{Options: target.Options{Target: target.RIE}}, Extra: []string{bad}}, base); err == nil {
			t.Errorf("-extra %q accepted", bad)
		}
	}
}
