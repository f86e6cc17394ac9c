package concurrent

import "time"

// watchStalls is the watchdog of the slots' connections. Four times per
// rapi.Client.StallTimeout it cuts off a /next answer that stopped midway
// (rapi.Conn.CutIfStalled). So a Runtime API that stalls in the middle of
// an answer costs the slot that time, then a retry, never the slot for
// good. rapi keeps no goroutine of its own, and watching from here costs
// the hot path a clock read instead of a read deadline per invocation.
func (rt *Runtime) watchStalls() (stop func()) {
	return every(max(rt.client.StallTimeout()/4, time.Millisecond), func(time.Time) {
		rt.slotsMu.RLock()
		for _, s := range rt.slots {
			s.conn.CutIfStalled()
		}
		rt.slotsMu.RUnlock()
	})
}

// every calls f with the time of each tick of a ticker of period d, on a
// goroutine of its own; stop ends the goroutine and waits for it.
func every(d time.Duration, f func(now time.Time)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case now := <-tick.C:
				f(now)
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
