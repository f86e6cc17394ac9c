package lambdatest_test

import (
	"encoding/json"
	"regexp"
	"testing"

	awsevents "github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent/lambdatest"
	"github.com/lmigo/lmigo/internal/fixtures/firstregion"
	"github.com/lmigo/lmigo/internal/fixtures/lazyrouter"
	"github.com/lmigo/lmigo/internal/fixtures/paramcache"
	"github.com/lmigo/lmigo/internal/fixtures/storeapi"
	"github.com/lmigo/lmigo/internal/fixtures/streambatch"
)

// withoutOrderID is lazyrouter's normaliser: a POST /orders answer, and
// no other, carries a new orderId and the time, which it takes out.
func withoutOrderID(event, answer []byte) []byte {
	var req awsevents.APIGatewayProxyRequest
	if json.Unmarshal(event, &req) != nil || req.HTTPMethod != "POST" || req.Path != "/orders" {
		return answer
	}
	return orderVaries.ReplaceAll(answer, nil)
}

var orderVaries = regexp.MustCompile(`\\"(orderId|createdAt)\\":\\"[^\\]*\\",?`)

// withoutColdStart is paramcache's: its coldStart is the process's.
func withoutColdStart(_, answer []byte) []byte { return coldStart.ReplaceAll(answer, nil) }

var coldStart = regexp.MustCompile(`,?\\"coldStart\\":(true|false)`)

// TestCheckIsolationOnFixtures runs CheckIsolation on functions in the
// shapes real repositories have (internal/fixtures), each with the
// defects it must catch and the correct code it must not blame.
func TestCheckIsolationOnFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	srv := paramcache.StandIn(0)
	defer srv.Close()
	t.Setenv(paramcache.EndpointVar, srv.URL) // the children's stand-in
	tests := []struct {
		name    string
		handler any
		events  [][]byte
		opts    []lambdatest.Option
		want    []string // regexps, each in the failure; none: it passes
		race    []string // under -race, in place of want
		not     []string // never in the failure
	}{
		{name: "lazyrouter", handler: lazyrouter.Handle, events: lazyrouter.Events(),
			want: []string{`event 2 \(.*\) answered otherwise even alone`, `event 4 \(.*\) answered otherwise even alone`, `WithNormalize`},
			not:  []string{`look for request state`, `answered otherwise served beside`, `event [013] `}},
		{name: "lazyrouter normalised", handler: lazyrouter.Handle, events: lazyrouter.Events(),
			// The race detector misses the race in some runs, where the
			// router's build orders them (fmt's pool): each round in a fresh
			// process is a new chance at it.
			opts: []lambdatest.Option{lambdatest.WithNormalize(withoutOrderID), lambdatest.WithRounds(10)},
			race: []string{`the race detector found a data race while the events were served at once, in \d+ of 10 rounds, each in a fresh process; the first:\nWARNING: DATA RACE\n(Read|Write) at`, `lazily inside the handler`},
			not:  []string{`look for request state`, `answered otherwise`, `even alone`}},
		{name: "storeapi", handler: storeapi.Handle, events: storeapi.Events(),
			not: []string{`.`}},
		{name: "storeapi log.Fatal", handler: storeapi.Handle, events: append(storeapi.Events(), storeapi.FatalEvent()),
			want: []string{`the process ended \(exit status 1\) while event 5 \(.*\) was served alone, in a child process of the test: on Lambda, log.Fatal, os.Exit or a crash on a request path ends every invocation in flight; its last output:\n.*get item bulk#legacy`},
			not:  []string{`look for request state`, `event [0-4] `}},
		{name: "streambatch", handler: streambatch.Handle, events: streambatch.Events(),
			not: []string{`.`}},
		{name: "paramcache", handler: paramcache.Handle, events: paramcache.Events(),
			want: []string{`event 0 \(.*\) answered otherwise even alone`, `coldStart`, `WithNormalize`},
			not:  []string{`look for request state`, `the answer of event`, `served beside`}},
		{name: "paramcache normalised", handler: paramcache.Handle, events: paramcache.Events(),
			opts: []lambdatest.Option{lambdatest.WithNormalize(withoutColdStart)},
			not:  []string{`.`}},
		{name: "firstregion", handler: firstregion.Handle, events: firstregion.Events(),
			want: []string{`event \d \(.*\) answered otherwise served beside 2 others \(round 1\):\n  alone:  \{"id":"([^"]+)","region":"([a-z0-9-]+)"\}\n  beside: \{"id":"[^"]+","region":"[a-z0-9-]+"\}`, `look for request state`},
			not:  []string{`even alone`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTB{TB: t}
			ft.run(func() { lambdatest.CheckIsolation(ft, tt.handler, tt.events, tt.opts...) })
			got := ft.text()
			want := tt.want
			if raceEnabled && tt.race != nil {
				want = tt.race
			}
			for _, w := range want {
				if !regexp.MustCompile(w).MatchString(got) {
					t.Errorf("CheckIsolation failed with:\n%s\nwant a failure matching %q", got, w)
				}
			}
			if len(want) == 0 && got != "" {
				t.Errorf("CheckIsolation failed a function it must pass:\n%s", got)
			}
			for _, n := range tt.not {
				if loc := regexp.MustCompile(n).FindStringIndex(got); loc != nil {
					t.Errorf("CheckIsolation said %q, which it must not:\n%s", got[loc[0]:min(loc[1]+80, len(got))], got)
				}
			}
			t.Logf("CheckIsolation said:\n%s", cutText(got, 3000))
		})
	}
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
