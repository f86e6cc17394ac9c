package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
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

func TestThrottleLines(t *testing.T) {
	rep := &report{Config: &config{Settings: bench.Settings{Options: target.Options{Target: target.RIE}, OnThrottle: bench.ThrottleNext}}, Runtimes: []target.Runtime{{Name: target.Lmigo}, {Name: target.AWSLambdaGo}}}
	for _, c := range []struct {
		n       int
		lm, ref float64
	}{{1, 10, 40}, {8, 10.1, 40}} {
		rep.Scenarios = append(rep.Scenarios, scenarioReport{
			Scenario: bench.Scenario{Workload: "tiny", N: c.n, PinCPU: -1},
			Medians:  map[string]map[string]float64{target.Lmigo: {bench.RejectedPct: c.lm}, target.AWSLambdaGo: {bench.RejectedPct: c.ref}},
		})
	}
	got := throttleLines(rep)
	if len(got) != 3 || !strings.Contains(got[0], "not retried") ||
		!strings.HasSuffix(got[1], "tiny N=1: lmigo 10.0% vs aws-lambda-go 40.0%, target ≤ ¼ (10.0%): met.") ||
		!strings.HasSuffix(got[2], ": NOT met.") {
		t.Errorf("lines:\n%s", strings.Join(got, "\n"))
	}
	rep.Config.Target = target.Fake
	if got := throttleLines(rep); got != nil {
		t.Errorf("fake target: %q, want no verdict", got)
	}
	if load.RejectedPct(0, 0) != 0 || load.RejectedPct(3, 1) != 25 {
		t.Error("rejectedPct")
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
