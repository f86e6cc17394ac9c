package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

// cache keeps a value fetched by a downstream call for ttl. The
// invocation that finds it expired fetches it again, holding no lock; the
// others answer with the value they have meanwhile, so that no invocation
// waits on another's call. A failed refresh keeps the old value, and the
// next invocation tries again.
type cache struct {
	fetch      func(context.Context) (string, error)
	ttl        time.Duration
	cur        atomic.Pointer[entry]
	refreshing atomic.Bool // one refresh at a time
}

type entry struct {
	value   string
	expires time.Time
}

// newCache fills a cache, to be called in main before Start.
func newCache(ctx context.Context, fetch func(context.Context) (string, error), ttl time.Duration) (*cache, error) {
	c := &cache{fetch: fetch, ttl: ttl}
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// get returns the value, refreshed first when it has expired and no
// other invocation is refreshing it.
func (c *cache) get(ctx context.Context) string {
	e := c.cur.Load()
	if time.Now().Before(e.expires) || !c.refreshing.CompareAndSwap(false, true) {
		return e.value
	}
	defer c.refreshing.Store(false)
	// Another refresh may have ended between the load and the swap.
	if e = c.cur.Load(); time.Now().Before(e.expires) {
		return e.value
	}
	if err := c.refresh(ctx); err != nil {
		concurrent.Logger(ctx).Warn("setting kept: refresh failed", zap.Error(err))
	}
	return c.cur.Load().value
}

func (c *cache) refresh(ctx context.Context) error {
	v, err := c.fetch(ctx)
	if err != nil {
		return err
	}
	c.cur.Store(&entry{value: v, expires: time.Now().Add(c.ttl)})
	return nil
}
