package concurrent

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/lmigo/lmigo/concurrent/internal/logline"
	"github.com/lmigo/lmigo/rapi"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Handlers that overrun their deadline. On LMI a timeout ends the
// invocation, not the handler: one that ignores its context keeps its
// slot's goroutine for as long as it runs. The overrun watch
// (watchOverruns) looks at each slot a few times per grace. A slot whose
// invocation is past its deadline by LMIGO_OVERRUN_GRACE is replaced. A
// new slot, with its own goroutine of the pool, connection and buffers,
// polls in its place. The old one keeps everything it had, which nothing
// else ever touches again. When its handler returns at last, its answer is
// posted with no poll behind it (410 expected). Then the old slot retires:
// its goroutine leaves the pool, its connection closes, its buffers go
// with it. At most LMIGO_MAX_OVERRUNS slots are replaced at once; a slot
// beyond that bound is held, warned about, and replaced when one of them
// returns. When every slot is held so for LMIGO_WEDGED_EXIT, the
// environment can serve nothing while it looks alive: the runtime writes
// one FATAL line and exits, so that Lambda replaces it.
//
// Deadlines are kept on the monotonic clock from hand-out (watchDeadline),
// so that neither a deadline already past nor a wall-clock step replaces
// a slot the platform still holds. The watch also cuts the connection of
// a slot still waiting for the reply to its answer once it is overdue
// (send, cutMissingReplies).
//
// The hot path pays one atomic store of the deadline as an invocation
// begins and one load and compare-and-swap as it is answered (slot.watch);
// the watch's goroutine does the rest.

// What the log says of overruns.
const (
	msgOverrun         = "a handler overran its deadline"
	msgOverrunReturned = "a handler that overran its deadline returned; its slot is released"
	msgOverrunBound    = "handlers overrunning at the bound (LMIGO_MAX_OVERRUNS): a slot whose handler overruns is not replaced until one returns"
	msgWedged          = "no slot can serve: every one is held by a handler that overran its deadline; exiting so that Lambda replaces the environment"
)

const (
	// maxStackLogged bounds the stack of one handler in a warning.
	maxStackLogged = 4 << 10
	// wedgedBudget bounds what the FATAL line lists, within maxLogLine.
	wedgedBudget = 24 << 10
	// wedgedEntry is about what one hung handler takes in the FATAL line
	// besides its stack.
	wedgedEntry = 200
	// overrunCheckMax bounds the watch's period.
	overrunCheckMax = 250 * time.Millisecond
)

// overrun is what the watch keeps of a handler that overran: it copies
// the slot's invocation while the slot cannot move on (watchTaking).
type overrun struct {
	s        *slot
	inv      rapi.Invocation // without its payload
	deadline time.Time
	goid     uint64
	replaced bool
}

// watchOverruns starts the overrun watch; stop ends it and waits for it.
func (rt *Runtime) watchOverruns() (stop func()) {
	period := max(min(rt.cfg.OverrunGrace/2, overrunCheckMax), time.Millisecond)
	return every(period, rt.checkOverruns)
}

// checkOverruns is one look of the watch at the slots.
func (rt *Runtime) checkOverruns(now time.Time) {
	grace := rt.cfg.OverrunGrace.Nanoseconds()
	t := mono(now)
	// A held slot whose handler returned overruns no more.
	for s := range rt.held {
		if w := s.watch.Load(); w != watchHeld && w != watchTaking {
			delete(rt.held, s)
		}
	}
	var found, again []int
	for i, s := range rt.slots { // only this goroutine changes rt.slots
		switch d := s.watch.Load(); {
		case d > 0 && t-d >= grace:
			if s.watch.CompareAndSwap(d, watchTaking) { // else answered meanwhile
				o := &overrun{s: s, inv: s.inv, deadline: s.inv.Deadline, goid: s.goid.Load()}
				o.inv.Payload = nil
				rt.held[s] = o
				found = append(found, i)
			}
		case d == watchHeld && rt.overrunning() < rt.cfg.MaxOverruns && !rt.stopping.Load():
			if s.watch.CompareAndSwap(d, watchTaking) {
				again = append(again, i)
			}
		}
	}
	replaced := false
	if len(found) > 0 {
		// Where each handler is, before any slot moves on.
		ids := make([]uint64, len(found))
		for k, i := range found {
			ids[k] = rt.held[rt.slots[i]].goid
		}
		stacks := goroutineStacks(ids)
		for _, i := range found {
			o := rt.held[rt.slots[i]]
			replaced = rt.decide(i, o) || replaced
			logInvocation(rt.log, zapcore.WarnLevel, &o.inv, msgOverrun,
				zap.Time("deadline", o.deadline), zap.Duration("pastDeadline", now.Sub(o.deadline)),
				zap.Bool("replaced", o.replaced), zap.Int("overrunning", rt.overrunning()+len(rt.held)),
				zap.Strings("overrunningIDs", rt.overrunningIDs()),
				zap.String("stack", cutStack(stacks[o.goid], maxStackLogged)))
		}
	}
	for _, i := range again {
		if o := rt.held[rt.slots[i]]; rt.decide(i, o) {
			replaced = true
			logInvocation(rt.log, zapcore.InfoLevel, &o.inv, "the slot of a handler that overran its deadline is replaced",
				zap.Duration("pastDeadline", now.Sub(o.deadline)))
		}
	}
	if replaced {
		// One profile a look, however many slots it replaced.
		rt.findLeftovers() // leftover.go
	}
	rt.cutMissingReplies(now)
	rt.checkWedged(now)
}

// cutMissingReplies cuts the connection of each slot still waiting, at
// now, for the reply to an answer past its deadline and the grace, posted
// (or posted again) StallTimeout before now or earlier (send). The slot's
// post fails, and it logs the cut from rapi's error. A slot that moved on
// meanwhile posted after now: rapi cuts none of its answers.
func (rt *Runtime) cutMissingReplies(now time.Time) {
	t, postedBefore := mono(now), now.Add(-rt.stallTimeout)
	cut := func(s *slot) {
		if after := s.replyAfter.Load(); after > 0 && t >= after {
			s.conn.CutReply(postedBefore)
		}
	}
	rt.slotsMu.RLock()
	defer rt.slotsMu.RUnlock()
	for _, s := range rt.slots {
		cut(s)
	}
	for _, o := range rt.overruns {
		cut(o.s)
	}
}

// decide replaces the slot of o, at index i, if the bound allows, or holds
// it, and reports whether it replaced it. The slot is in watchTaking until
// then, and o in rt.held.
func (rt *Runtime) decide(i int, o *overrun) bool {
	s := o.s
	o.replaced = rt.overrunning() < rt.cfg.MaxOverruns && !rt.stopping.Load() && rt.replace(i, o)
	if !o.replaced {
		s.watch.Store(watchHeld)
		if n := rt.overrunning(); n >= rt.cfg.MaxOverruns && rt.boundLogged.CompareAndSwap(false, true) {
			rt.log.Warn(msgOverrunBound, zap.Int("overrunning", n), zap.Int("maxOverruns", rt.cfg.MaxOverruns))
		}
		return false
	}
	delete(rt.held, s)
	// The invocation no longer holds a slot: it ended for the platform.
	s.countOut()
	rt.metrics.replacedSlot()
	s.watch.Store(watchReplaced)
	return true
}

// replace starts a new slot in the place of rt.slots[i], whose handler
// overran, and keeps the old one among the overruns until it retires.
func (rt *Runtime) replace(i int, o *overrun) bool {
	s := newSlot(rt)
	// Dialed here, so that the slot's goroutine does not grow its stack
	// for it (connect); if it fails the slot dials again itself.
	_ = s.conn.Connect(rt.polling)
	rt.slotsMu.Lock()
	rt.slots[i] = s
	rt.overruns = append(rt.overruns, o)
	rt.slotsMu.Unlock()
	if err := rt.workers.Invoke(s); err != nil {
		// The pool is full: a retired slot's goroutine has not left it
		// yet. The old slot stays, held, and is replaced at a later look.
		rt.slotsMu.Lock()
		rt.slots[i] = o.s
		rt.overruns = rt.overruns[:len(rt.overruns)-1]
		rt.slotsMu.Unlock()
		_ = s.conn.Close()
		return false
	}
	return true
}

// maxIDsLogged bounds the request IDs an overrun warning names.
const maxIDsLogged = 16

// overrunningIDs names the handlers that overrun now, replaced or held,
// the longest overrun first, at most maxIDsLogged: the watch's own.
func (rt *Runtime) overrunningIDs() []string {
	rt.slotsMu.RLock()
	hung := slices.Clone(rt.overruns)
	rt.slotsMu.RUnlock()
	for _, o := range rt.held {
		hung = append(hung, o)
	}
	slices.SortStableFunc(hung, func(a, b *overrun) int { return a.deadline.Compare(b.deadline) })
	ids := make([]string, 0, min(len(hung), maxIDsLogged))
	for _, o := range hung[:cap(ids)] {
		ids = append(ids, o.inv.RequestID)
	}
	return ids
}

// overrunning is how many replaced slots' handlers still run.
func (rt *Runtime) overrunning() int {
	rt.slotsMu.RLock()
	defer rt.slotsMu.RUnlock()
	return len(rt.overruns)
}

// checkWedged ends the process once no slot has been able to serve for
// LMIGO_WEDGED_EXIT: every one held by a handler that overran, none
// replaceable.
func (rt *Runtime) checkWedged(now time.Time) {
	if rt.cfg.WedgedExit == 0 || rt.wedgedDone {
		return
	}
	for _, s := range rt.slots {
		if s.watch.Load() != watchHeld {
			rt.wedgedSince = time.Time{}
			return
		}
	}
	if rt.wedgedSince.IsZero() {
		rt.wedgedSince = now
	}
	if now.Sub(rt.wedgedSince) < rt.cfg.WedgedExit {
		return
	}
	rt.wedgedDone = true
	rt.endWedged(now)
}

// endWedged writes the FATAL line, the last metrics, and exits 1.
func (rt *Runtime) endWedged(now time.Time) {
	rt.slotsMu.RLock()
	hung := make([]*overrun, 0, len(rt.held)+len(rt.overruns))
	for _, o := range rt.held {
		hung = append(hung, o)
	}
	replaced := len(rt.overruns)
	hung = append(hung, rt.overruns...)
	rt.slotsMu.RUnlock()
	// The longest overrun first: it is listed whatever the budget.
	slices.SortFunc(hung, func(a, b *overrun) int { return a.deadline.Compare(b.deadline) })
	ids := make([]uint64, len(hung))
	for i, o := range hung {
		ids[i] = o.goid
	}
	list := wedgedList{now: now, hung: hung, stacks: goroutineStacks(ids)}
	list.fit(wedgedBudget)
	if ce := rt.log.Core().Check(zapcore.Entry{Level: zapcore.FatalLevel, Time: now, Message: msgWedged}, nil); ce != nil {
		ce.Write(zap.Duration("wedgedFor", now.Sub(rt.wedgedSince)), zap.Int("slots", len(rt.slots)),
			zap.Int("overrunning", len(hung)), zap.Int("replaced", replaced), zap.Int("maxOverruns", rt.cfg.MaxOverruns),
			zap.Array("hung", list), zap.Int("notListed", len(hung)-list.n))
	}
	if rt.metrics != nil {
		rt.metrics.wedged.Add(1)
		rt.emitMetrics(now)
	}
	_ = rt.log.Sync()
	rt.opts.exit(1)
}

// wedgedList logs the first n hung handlers, each with its stack cut to
// stack bytes.
type wedgedList struct {
	now    time.Time
	hung   []*overrun
	stacks map[uint64]string
	n      int
	stack  int
}

// fit chooses how many handlers, and how much of each stack, fit budget.
func (l *wedgedList) fit(budget int) {
	l.n = min(len(l.hung), budget/wedgedEntry)
	if l.n > 0 {
		l.stack = min(maxStackLogged/2, budget/l.n-wedgedEntry)
	}
}

func (l wedgedList) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for _, o := range l.hung[:l.n] {
		_ = enc.AppendObject(zapcore.ObjectMarshalerFunc(func(e zapcore.ObjectEncoder) error {
			e.AddString(keyRequestID, o.inv.RequestID)
			e.AddTime("deadline", o.deadline)
			e.AddDuration("pastDeadline", l.now.Sub(o.deadline))
			e.AddBool("replaced", o.replaced)
			if l.stack > 0 {
				e.AddString("stack", cutStack(l.stacks[o.goid], l.stack))
			}
			return nil
		}))
	}
	return nil
}

// maxStacksDump bounds the dump of every goroutine's stack.
const maxStacksDump = 64 << 20

// goroutineStacks returns the stacks of the goroutines ids, from one dump
// of all of them (runtime.Stack, which stops the world for the time it
// takes: only when handlers overrun).
func goroutineStacks(ids []uint64) map[uint64]string {
	out := make(map[uint64]string, len(ids))
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= maxStacksDump {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		rest, ok := bytes.CutPrefix(g, []byte("goroutine "))
		i := bytes.IndexByte(rest, ' ')
		if !ok || i <= 0 {
			continue
		}
		id, err := strconv.ParseUint(string(rest[:i]), 10, 64)
		if err == nil && slices.Contains(ids, id) {
			out[id] = string(g)
		}
	}
	return out
}

// cutStack cuts a stack to at most limit bytes at a line's end, marked.
func cutStack(stack string, limit int) string {
	if len(stack) <= limit {
		return stack
	}
	keep := stack[:max(limit-logline.CutMarkLen(len(stack)), 0)]
	if i := bytes.LastIndexByte([]byte(keep), '\n'); i > 0 {
		keep = keep[:i+1]
	}
	return string(logline.AppendCutMark([]byte(keep), len(stack)-len(keep)))
}

// replacedOverruns returns the replaced slots whose handlers still run.
func (rt *Runtime) replacedOverruns() []*overrun {
	rt.slotsMu.RLock()
	defer rt.slotsMu.RUnlock()
	return slices.Clone(rt.overruns)
}
