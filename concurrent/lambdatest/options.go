package lambdatest

import (
	"fmt"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/internal/testhook"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// Option configures Start and CheckIsolation. It is lambdatest's own
// type, as goleak's and httptest's options are theirs: none can be given
// to concurrent.New by mistake (it would not compile). The runtime's own
// options go through WithRuntime.
type Option interface {
	apply(*config)
}

type option func(*config)

func (o option) apply(c *config) { o(c) }

// DefaultConcurrency is N when no WithConcurrency option says otherwise.
const DefaultConcurrency = 8

// DefaultRounds is how many times CheckIsolation serves its events at
// once, each time in a fresh process.
const DefaultRounds = 3

// config is what the options set.
type config struct {
	runtime   []concurrent.Option
	environ   func() []string // the names warned of, as the runtime's options say
	n         int
	timeout   time.Duration
	rounds    int
	normalize func(event, answer []byte) []byte
	compare   func(event []byte, alone, beside Result) error
}

// WithRuntime passes the runtime's options to concurrent.New, as the
// function's main passes them: production's options, for its test.
//
//	lambdatest.Start(t, handler, lambdatest.WithRuntime(concurrent.WithLambdaOptions(options...)))
func WithRuntime(opts ...concurrent.Option) Option {
	return option(func(c *config) { c.runtime = append(c.runtime, opts...) })
}

// WithConcurrency sets N, the invocations served at once, for Start.
// CheckIsolation sets its own N, the number of its events.
func WithConcurrency(n int) Option { return option(func(c *config) { c.n = n }) }

// WithTimeout sets each invocation's timeout (rapitest.DefaultTimeout,
// Lambda's 3 s, by default); a handler still running then ends its
// invocation with Sandbox.Timedout.
func WithTimeout(d time.Duration) Option { return option(func(c *config) { c.timeout = d }) }

// WithRounds sets how many times CheckIsolation serves its events at once,
// each time in a fresh process and a new order.
func WithRounds(n int) Option { return option(func(c *config) { c.rounds = n }) }

// WithNormalize makes CheckIsolation compare normalize(event, answer)
// rather than the answer, for handlers whose answers vary (a time, a
// random ID): it returns the answer to event with what varies taken out.
// The invocation's own request ID is replaced by "<requestId>", and its
// trace by "<traceId>", before it is called. It also judges whether an
// event's answers served alone agree.
func WithNormalize(normalize func(event, answer []byte) []byte) Option {
	return option(func(c *config) { c.normalize = normalize })
}

// WithCompare makes CheckIsolation judge each answer to event served
// beside others by compare rather than by equality with the answer served
// alone: a non-nil error is a failure, reported with both answers. It also
// judges whether an event's answers served alone agree.
func WithCompare(compare func(event []byte, alone, beside Result) error) Option {
	return option(func(c *config) { c.compare = compare })
}

// readConfig applies opts to the defaults, and returns the environment
// lookup the runtime's options set (os.LookupEnv unless one sets another).
func readConfig(opts []Option) (config, func(string) (string, bool), error) {
	c := config{n: DefaultConcurrency, timeout: rapitest.DefaultTimeout, rounds: DefaultRounds}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	switch {
	case c.n < 1:
		return c, nil, fmt.Errorf("WithConcurrency(%d): N is at least 1", c.n)
	case c.rounds < 1:
		return c, nil, fmt.Errorf("WithRounds(%d): CheckIsolation serves its events at once at least once", c.rounds)
	case c.timeout <= 0:
		return c, nil, fmt.Errorf("WithTimeout(%v): an invocation's timeout is above 0", c.timeout)
	}
	var lookup func(string) (string, bool)
	lookup, c.environ = testhook.Lookup(c.runtime)
	return c, lookup, nil
}
