package report

import (
	"strings"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

func TestExactlyOnce(t *testing.T) {
	ok := rapitest.Stats{Invocations: 10, Responses: 7, Errors: 3, MaxOutstanding: 4}
	for _, c := range []struct {
		name    string
		edit    func(*rapitest.Stats, *bench.RunResult)
		holds   bool
		contain string
	}{
		{"ok", func(*rapitest.Stats, *bench.RunResult) {}, true, "yes: 10 handed out = 10 answered once"},
		{"lost", func(s *rapitest.Stats, _ *bench.RunResult) { s.Responses, s.Timeouts = 6, 1 }, false, "NO: 10 handed out ≠ 9 answered once, 1 lost"},
		{"duplicated", func(s *rapitest.Stats, _ *bench.RunResult) { s.Duplicates = 1 }, false, "1 duplicated"},
		{"cross-wired", func(s *rapitest.Stats, _ *bench.RunResult) { s.CrossWired = 2 }, false, "2 cross-wired"},
		{"no echo", func(s *rapitest.Stats, _ *bench.RunResult) { s.NoEcho = 1 }, false, "1 without echo"},
		{"no echo expected", func(s *rapitest.Stats, r *bench.RunResult) { s.NoEcho, r.Runtime = 10, target.AWSLambdaGo }, true, "echo not expected"},
		{"over N", func(s *rapitest.Stats, _ *bench.RunResult) { s.MaxOutstanding, s.Violations = 5, 1 }, false, "max polls + in flight 5 > N=4 (1 violations)"},
		{"driver", func(_ *rapitest.Stats, r *bench.RunResult) { r.Load.OK = 6 }, false, "the callers counted 9 answers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := ok
			r := bench.RunResult{Runtime: target.Lmigo, Load: bench.LoadCounts{OK: 7, FuncErrors: 3}}
			c.edit(&st, &r)
			r.API = &st
			oc, _ := exactlyOnce(r, 4)
			if oc.holds() != c.holds || !strings.Contains(oc.String(), c.contain) {
				t.Errorf("holds %v, %q; want %v, containing %q", oc.holds(), oc, c.holds, c.contain)
			}
		})
	}
	if _, checked := exactlyOnce(bench.RunResult{}, 4); checked {
		t.Error("checked without the fake API")
	}
}
