package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/load"
	"github.com/lmigo/lmigo/loadtest/target"
)

// TargetCheck is one of the memory targets, checked on the medians
// of a waves scenario (grow, stack:S).
type TargetCheck struct {
	Runtime string  `json:"runtime"`
	What    string  `json:"what"`
	Value   float64 `json:"valueMiB"`
	Limit   float64 `json:"limitMiB"`
	Holds   bool    `json:"holds"`
}

// slack is what RSS after the burst may exceed RSS before by, besides the
// buffers the raw handler's workers keep: the 8 MiB allowance.
const slack = 8

// checkTargets checks the memory targets for the waves scenario sr (grow,
// stack:S): for the typed handler (lmigo), RSS after - RSS before <= 8
// MiB, and for grow at N=64 peak RSS <= 40 MiB; for the raw handler
// (lmigo-raw), whose N buffers of 6 MiB are in flight during a wave by
// design, RSS after - RSS before <= N x the retain cap + 8 MiB. aws-lambda-go has no target; a variant of lmigo
// (-extra lmigo-NAME) has the typed handler's. A runtime without medians
// (every run had problems) fails its targets.
func checkTargets(s bench.Settings, sr ScenarioReport) []TargetCheck {
	sc := sr.Scenario
	if !sc.Work.Waved() || s.Target == target.Lambda {
		return nil
	}
	var out []TargetCheck
	add := func(rt, what, key string, limit float64) {
		v, ok := sr.Medians[rt][key]
		out = append(out, TargetCheck{Runtime: rt, What: what, Value: v, Limit: limit, Holds: ok && v <= limit})
	}
	for rt := range sr.Medians {
		switch {
		case rt == target.Lmigo || strings.HasPrefix(rt, target.Lmigo+"-") && rt != target.LmigoRaw && rt != target.LmigoHandler: // -extra lmigo-*: the typed handler's
			add(rt, "RSS after - RSS before <= 8 MiB", bench.RSSGrowth, slack)
			if sc.Workload == "grow" && sc.N == 64 {
				add(rt, "peak RSS at N=64 <= 40 MiB", bench.PeakRSS, 40)
			}
		case rt == target.LmigoRaw:
			retain := retainCap(s, sc.N)
			add(rt, fmt.Sprintf("RSS after - RSS before <= N x retain cap + 8 MiB (%d x %s + 8 MiB)", sc.N, load.FormatSize(retain)),
				bench.RSSGrowth, float64(sc.N)*float64(retain)/(1<<20)+slack)
		}
	}
	slices.SortFunc(out, func(a, b TargetCheck) int {
		if c := strings.Compare(a.Runtime, b.Runtime); c != 0 {
			return c
		}
		return strings.Compare(a.What, b.What)
	})
	return out
}

// retainCap is LMIGO_BUFFER_RETAIN_BYTES as lmigo reads it from the
// environment the load test gives it (-env included).
func retainCap(s bench.Settings, n int) int {
	env := map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}
	for _, kv := range s.Environ(n) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	c, err := limits.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return 0
	}
	return c.BufferRetainBytes
}
