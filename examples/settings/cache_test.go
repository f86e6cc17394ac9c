package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

// n is N, the invocations in flight: as many as one refresh may stall.
const n = 16

// lockedCache is the pattern docs/lmi.md warns of: a package-level cache
// whose lock is held across the downstream call, so that every
// invocation in flight waits for each refresh. waiting counts those
// that reached the lock and have not taken it yet.
type lockedCache struct {
	fetch   func(context.Context) (string, error)
	ttl     time.Duration
	mu      sync.Mutex
	value   string
	expires time.Time
	waiting atomic.Int32
}

func (c *lockedCache) get(ctx context.Context) string {
	c.waiting.Add(1)
	c.mu.Lock()
	c.waiting.Add(-1)
	defer c.mu.Unlock()
	if time.Now().After(c.expires) {
		if v, err := c.fetch(ctx); err == nil {
			c.value, c.expires = v, time.Now().Add(c.ttl)
		}
	}
	return c.value
}

// getter is either cache: an expired value "v1" and its fetch.
type getter interface {
	get(ctx context.Context) string
}

func newLocked(fetch func(context.Context) (string, error)) (getter, func() int) {
	c := &lockedCache{fetch: fetch, ttl: time.Hour, value: "v1"}
	return c, func() int { return int(c.waiting.Load()) }
}

func newOutside(fetch func(context.Context) (string, error)) (getter, func() int) {
	c := &cache{fetch: fetch, ttl: time.Hour}
	c.cur.Store(&entry{value: "v1"})  // expired
	return c, func() int { return 0 } // no lock to wait on
}

var variants = []struct {
	name  string
	build func(fetch func(context.Context) (string, error)) (getter, func() int)
}{
	{"lock held across the call", newLocked},
	{"refresh outside the lock", newOutside},
}

// serve starts the runtime at N=n over g, each invocation's timeout
// timeout.
func serve(tb testing.TB, g getter, timeout time.Duration) *lambdatest.Function {
	h := func(ctx context.Context) (answer, error) { return answer{Value: g.get(ctx)}, nil }
	return lambdatest.Start(tb, h, lambdatest.WithConcurrency(n), lambdatest.WithTimeout(timeout))
}

// TestRefreshStalls: n invocations arrive at N=n as the value expires,
// and the first to see it so refreshes it, through a downstream call that
// the test holds. An invocation is stalled when it cannot answer before
// the call returns. With the lock held across the call, all n are; with
// the refresh outside the lock, only the one making the call, and the
// others answer with the value they had. No clock decides the count:
// the test waits until every invocation has answered or waits on the
// lock, then lets the call return.
func TestRefreshStalls(t *testing.T) {
	want := map[string]int{"lock held across the call": n, "refresh outside the lock": 1}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			started, release := make(chan struct{}, n), make(chan struct{})
			var calls atomic.Int32
			fetch := func(ctx context.Context) (string, error) {
				calls.Add(1)
				started <- struct{}{}
				select {
				case <-release:
					return "v2", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			// The test's deadline bounds the wait, not a guess: the
			// invocations' own timeout is past it, and the test gives up
			// before go test's -timeout would, to say what it saw.
			timeout, giveUp := time.Hour, (<-chan time.Time)(nil)
			if d, ok := t.Deadline(); ok {
				timeout, giveUp = time.Until(d), time.After(time.Until(d)*9/10)
			}
			g, waiting := v.build(fetch)
			f := serve(t, g, timeout)
			answers := make(chan lambdatest.Result, n) // read by the test alone
			for range n {
				go func() { answers <- f.Invoke([]byte(`{}`)) }()
			}
			select {
			case <-started: // the refresh is under way, and held
			case <-giveUp:
				t.Fatal("no invocation refreshed the expired value")
			}
			var got []string
			for len(got)+waiting() < n-1 {
				select {
				case r := <-answers:
					got = append(got, value(t, r))
				case <-time.After(time.Millisecond): // look at waiting again
				case <-giveUp:
					close(release)
					t.Fatalf("%d answered and %d waiting on the lock, of the %d that do not refresh", len(got), waiting(), n-1)
				}
			}
			stalled := n - len(got)
			close(release)
			for len(got) < n {
				got = append(got, value(t, <-answers))
			}
			t.Logf("%d of %d invocations stalled by one refresh, %d call(s) downstream", stalled, n, calls.Load())
			if stalled != want[v.name] || calls.Load() != 1 {
				t.Errorf("%d stalled and %d calls downstream, want %d and 1", stalled, calls.Load(), want[v.name])
			}
			// The stalled answer the new value, the others the old one.
			if fresh := len(slices.DeleteFunc(got, func(a string) bool { return a != "v2" })); fresh != stalled {
				t.Errorf("%d answered the refreshed value, want %d", fresh, stalled)
			}
		})
	}
}

func value(t *testing.T, r lambdatest.Result) string {
	t.Helper()
	if r.Err != nil {
		t.Error(r.Err)
		return ""
	}
	var a answer
	if err := json.Unmarshal(r.Payload, &a); err != nil {
		t.Errorf("%s: %v", r.Payload, err)
	}
	return a.Value
}

// BenchmarkRefresh measures the same with a downstream call of 50 ms, by
// the clock: in each iteration n invocations arrive at N=n as the value
// expires. It reports the invocations that took 25 ms or more
// (stalled/refresh) and the median time an invocation took.
func BenchmarkRefresh(b *testing.B) {
	const call = 50 * time.Millisecond
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			fetch := func(ctx context.Context) (string, error) {
				t := time.NewTimer(call)
				defer t.Stop()
				select {
				case <-t.C:
					return "v2", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			g, _ := v.build(fetch)
			f := serve(b, g, time.Minute)
			var stalled int
			var took []time.Duration
			for b.Loop() {
				expire(g)
				var wg sync.WaitGroup
				var mu sync.Mutex
				for range n {
					wg.Go(func() {
						start := time.Now()
						r := f.Invoke([]byte(`{}`))
						d := time.Since(start)
						if r.Err != nil {
							b.Error(r.Err)
						}
						mu.Lock()
						took = append(took, d)
						mu.Unlock()
					})
				}
				wg.Wait()
			}
			for _, d := range took {
				if d >= call/2 {
					stalled++
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(stalled)/float64(b.N), "stalled/refresh")
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
		})
	}
}

// expire makes either cache's value expired.
func expire(g getter) {
	switch c := g.(type) {
	case *lockedCache:
		c.mu.Lock()
		c.expires = time.Time{}
		c.mu.Unlock()
	case *cache:
		c.cur.Store(&entry{value: c.cur.Load().value})
	}
}

// TestFetchFrom: the store's answer, trimmed; a status other than 200 is
// an error, and newCache fails with it.
func TestFetchFrom(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/flag" {
			http.Error(w, "no such setting", http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte("on\n"))
	}))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	if v, err := fetchFrom(client, srv.URL+"/flag")(t.Context()); v != "on" || err != nil {
		t.Errorf("got %q, %v; want on", v, err)
	}
	if _, err := newCache(t.Context(), fetchFrom(client, srv.URL+"/other"), time.Minute); !errors.Is(err, errStore) {
		t.Errorf("a 404: %v, want errStore", err)
	}
}

// TestHandler: served at N=8 through the runtime, every invocation
// answers the cached value, and invocations share nothing else.
func TestHandler(t *testing.T) {
	c, err := newCache(t.Context(), func(context.Context) (string, error) { return "on", nil }, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	f := lambdatest.Start(t, handler(c))
	if got := value(t, f.Invoke([]byte(`{}`))); got != "on" {
		t.Errorf("answered %q, want on", got)
	}
	lambdatest.CheckIsolation(t, handler(c), [][]byte{[]byte(`{}`), []byte(`{"a":1}`), []byte(`[]`)})
}
