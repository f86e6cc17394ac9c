package lambdatest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/internal/testhook"
)

// maxReports bounds the failures CheckIsolation reports one by one.
const maxReports = 10

// Hints, said once each with the first failure of their kind.
const (
	hintAnswer = "The answer depends on what other invocations do: look for request state kept where " +
		"invocations share it (a package-level variable, a field of a shared struct, client or " +
		"handler, a map or buffer) set by one invocation and read by another, often across a " +
		"downstream call. Keep it in locals or in the invocation's context."
	hintLine = "A line of one invocation carries another's: look for a logger, metrics set or " +
		"buffer kept beyond its invocation (a package variable holding concurrent.Logger(ctx) or a " +
		"logger With a requestId set once) or shared by invocations. Take concurrent.Logger(ctx) " +
		"in each invocation."
	hintAlone = "Its answer varies even alone (a random ID, a time, a count, a first-invocation flag), " +
		"so it cannot show what invocations share: take what varies out with WithNormalize, or judge " +
		"answers with WithCompare."
	hintRace = "Invocations served at once write and read a variable without synchronisation. State " +
		"built lazily inside the handler (if client == nil { client = build() }) is the common " +
		"case: build it before Start, in main or a package variable's initialiser, or with " +
		"sync.Once; guard what invocations share with a mutex or sync/atomic."
)

// Bounds on what a failure shows of a child process's output.
const (
	maxRaceReport  = 8 << 10
	maxOutputShown = 4 << 10
)

// CheckIsolation checks that handler serves each of events the same
// whether it is served alone or beside the others, as Lambda Managed
// Instances serve invocations at once in one process. It serves all the
// events at once at N = len(events), in rounds (WithRounds), each on a
// runtime in a fresh process and in a new order, every invocation of a
// round handed out together. It serves each event alone, twice, in a
// fresh process of its own, so that no other event has touched what it
// reads (the package doc says how, and what stays out of reach). An
// event whose two answers alone differ fails t as an answer that varies
// even alone, and its answers beside others are not judged. It fails t,
// naming the event and showing both answers, where an answer served
// beside others differs from the one served alone (WithNormalize,
// WithCompare for answers that vary), and where a log line or metric
// document of one invocation carries another's request ID or what another
// wrote alone, or carries the request ID of an invocation that had ended.
// Each round's invocations wait at their start until all have started, so
// that state shared by invocations shows as answers mixed, without -race,
// wherever an invocation waits between writing it and reading it (a
// downstream call, a sleep, any I/O). Under -race the race detector's
// reports from those processes fail t too. Events that differ make it
// show. A failure names an event by its index and its bytes on one line:
// compact JSON, its first 60 bytes, or, where the events share a longer
// start, the members where it parts from the others, "..." for what is
// left out: (..."rawQueryString":"name=banner","headers"...).
//
// It reads WithRuntime, WithTimeout, WithRounds, WithNormalize and
// WithCompare; N is the number of events.
func CheckIsolation(t testing.TB, handler any, events [][]byte, opts ...Option) {
	t.Helper()
	if len(events) == 0 {
		t.Fatalf("lambdatest: CheckIsolation needs events")
	}
	c, lookup, err := readConfig(opts)
	if err != nil {
		t.Fatalf("lambdatest: %v", err)
	}
	c.n = len(events)
	hopts := c.runtime
	if v, ok := lookup("LMIGO_JSON_CODEC"); ok && v != "" {
		// As New reads it, over WithCodec; NewHandler reads no environment.
		hopts = append(append([]concurrent.Option(nil), c.runtime...), concurrent.WithCodec(v))
	}
	h := concurrent.NewHandler(handler, hopts...)
	if err := testhook.Refused(h); err != nil {
		t.Fatalf("lambdatest: %v", err)
	}
	call := nextCall(t)
	if tk, ok := childTask(); ok {
		if tk.Test == t.Name() && tk.Call == call {
			serveTask(t, h.(concurrent.StreamInvoker), c, lookup, tk)
		}
		return
	}
	together, alone, err := children(t, call, c.rounds, events)
	if err != nil {
		t.Fatalf("lambdatest: CheckIsolation: %v", err)
	}
	k := &checker{tb: t, c: c, events: events}
	k.judge(together, alone)
	k.summary()
}

type checker struct {
	tb     testing.TB
	c      config
	events [][]byte
	// alone is each event's first answer served alone; runs, all of
	// them. known: they came; varies: they differ, so that an answer
	// beside others cannot be judged by them.
	alone  []Result
	runs   [][]Result
	known  []bool
	varies []bool
	// aloneValues are the values of each event's lines served alone;
	// owner, of those only one event wrote, which.
	aloneValues []map[string]bool
	owner       map[string]int
	names       []string // each event's, in failures
	reports     int
	hinted      map[string]bool
	logged      map[string]bool // the runtime lines logged to the test
}

// whileTogether names the children serving the events at once.
const whileTogether = "the events were served at once"

func (k *checker) report(hint, format string, args ...any) {
	k.tb.Helper()
	k.reports++
	if k.reports > maxReports {
		return
	}
	msg := "lambdatest: " + fmt.Sprintf(format, args...)
	if k.hinted == nil {
		k.hinted = map[string]bool{}
	}
	if hint != "" && !k.hinted[hint] {
		k.hinted[hint] = true
		msg += "\n" + hint
	}
	k.tb.Errorf("%s", msg)
}

func (k *checker) summary() {
	k.tb.Helper()
	if k.reports > maxReports {
		k.tb.Errorf("lambdatest: and %d more failures of isolation", k.reports-maxReports)
	}
}

// judge reports what the child processes found: their own failures and
// races, then each round's answers and lines against those served alone.
func (k *checker) judge(together, alone []outcome) {
	k.tb.Helper()
	k.races(together)
	reps := make([]*report, len(together))
	for r, o := range together { // first: the runtime's lines as a whole
		reps[r] = k.child(o, fmt.Sprintf("%s (round %d)", whileTogether, r+1), r == 0)
	}
	n := len(k.events)
	k.alone, k.runs, k.known, k.varies = make([]Result, n), make([][]Result, n), make([]bool, n), make([]bool, n)
	for i, o := range alone {
		while := fmt.Sprintf("event %d %s was served alone", i, k.event(i))
		k.races([]outcome{o}, while)
		rep := k.child(o, while, false)
		if rep == nil || len(rep.Served) == 0 {
			continue
		}
		for _, run := range rep.Served {
			k.runs[i] = append(k.runs[i], run[0].result())
		}
		k.alone[i], k.known[i] = k.runs[i][0], true
		k.late(rep.Late)
		k.alike(i)
	}
	k.learnAlone()
	for r, rep := range reps {
		if rep == nil || len(rep.Served) == 0 {
			continue
		}
		beside := make([]Result, len(rep.Served[0]))
		for i, w := range rep.Served[0] {
			beside[i] = w.result()
		}
		k.compare(r+1, beside)
		k.late(rep.Late)
	}
}

// races reports the race detector's reports in the output of children
// (the rounds when while is not given), once: the first, and in how many
// of them it found races.
func (k *checker) races(outs []outcome, while ...string) {
	k.tb.Helper()
	first, found := "", 0
	for _, o := range outs {
		if f, n := o.races(); n > 0 {
			if found++; first == "" {
				first = f
			}
		}
	}
	if found == 0 {
		return
	}
	where := fmt.Sprintf("%s, in %d of %d rounds, each in a fresh process", whileTogether, found, len(outs))
	if len(while) > 0 {
		where = while[0] + ", in a fresh process"
	}
	k.report(hintRace, "the race detector found a data race while %s; the first:\n%s", where, cut(first, maxRaceReport))
}

// child reports a child process's own failures, logs its runtime's lines
// (all of them, or its warnings and errors) and returns its report, nil
// when it wrote none.
func (k *checker) child(o outcome, while string, allLines bool) *report {
	k.tb.Helper()
	switch {
	case o.rep == nil && o.err != nil:
		k.report("", "the process ended (%v) while %s, in a child process of the test: on Lambda, log.Fatal, "+
			"os.Exit or a crash on a request path ends every invocation in flight; its last output:\n%s",
			o.err, while, last(o.output, maxOutputShown))
		return nil
	case o.rep == nil:
		k.report("", "no answer came back while %s, in a child process of the test: it ran no such CheckIsolation "+
			"call (a test must make its calls the same way each time it runs); its last output:\n%s",
			while, last(o.output, maxOutputShown))
		return nil
	}
	for _, f := range o.rep.Failures {
		k.report("", "while %s, in a child process: %s", while, strings.TrimPrefix(f, "lambdatest: "))
	}
	k.logs(o.rep.Logs, while, allLines)
	return o.rep
}

// logs logs to the test what a child's runtime logged (its lines of no
// invocation): all of them, or their warnings and errors, each once.
func (k *checker) logs(lines []string, while string, all bool) {
	k.tb.Helper()
	if k.logged == nil {
		k.logged = map[string]bool{}
	}
	for _, l := range lines {
		key, level := lineKey(l)
		if k.logged[key] || (!all && level != `"WARN"` && level != `"ERROR"` && level != `"FATAL"`) {
			continue
		}
		k.logged[key] = true
		k.tb.Logf("%s (while %s)", l, while)
	}
}

// lineKey is a logged runtime line without its time stamp, and its level.
func lineKey(l string) (key, level string) {
	js, ok := strings.CutPrefix(l, "runtime: ")
	ms, isJSON := members([]byte(js))
	if !ok || !isJSON {
		return l, ""
	}
	var b strings.Builder
	for _, m := range ms {
		switch m.key {
		case "timestamp":
			continue
		case "level":
			level = string(m.value)
		}
		b.WriteString(m.key + "=" + string(m.value) + " ")
	}
	return b.String(), level
}

// alike reports event i when its answers served alone differ: they then
// vary by nature, and nothing says that invocations share state.
func (k *checker) alike(i int) {
	k.tb.Helper()
	for r, run := range k.runs[i][1:] {
		if k.differs(i, k.alone[i], run) == nil {
			continue
		}
		k.varies[i] = true
		k.report(hintAlone, "event %d %s answered otherwise even alone, served again in the same fresh process (run %d):\n  first: %s\n  then:  %s",
			i, k.event(i), r+2, answer(k.alone[i]), answer(run))
		return
	}
}

func (k *checker) compare(round int, beside []Result) {
	k.tb.Helper()
	for i, b := range beside {
		// An answer that varies even alone has nothing to be judged by.
		if k.known[i] && !k.varies[i] && k.differs(i, k.alone[i], b) != nil {
			k.report(hintAnswer, "event %d %s answered otherwise served beside %d others (round %d)%s:\n  alone:  %s\n  beside: %s",
				i, k.event(i), len(beside)-1, round, k.whose(i, b, beside), answer(k.alone[i]), answer(b))
		}
		k.lines(round, i, b, beside)
	}
}

// differs is nil when beside is the answer alone was to event i, as
// judged by the options.
func (k *checker) differs(i int, alone, beside Result) error {
	if k.c.compare != nil {
		return k.c.compare(k.events[i], alone, beside)
	}
	if k.norm(i, alone) != k.norm(i, beside) {
		return fmt.Errorf("differs")
	}
	return nil
}

// norm is an answer to event i as compared: its own request ID and trace
// replaced, normalised.
func (k *checker) norm(i int, r Result) string {
	b := []byte(answer(r))
	if r.RequestID != "" {
		b = bytes.ReplaceAll(b, []byte(r.RequestID), []byte("<requestId>"))
	}
	if r.TraceID != "" {
		// The whole header, then its root alone: "1-67a0b1c2-...".
		b = bytes.ReplaceAll(b, []byte(r.TraceID), []byte("<traceId>"))
		if root, ok := traceRoot(r.TraceID); ok {
			b = bytes.ReplaceAll(b, []byte(root), []byte("<traceId>"))
		}
	}
	if k.c.normalize != nil {
		b = k.c.normalize(k.events[i], b)
	}
	return string(b)
}

// traceRoot is the Root of a trace header.
func traceRoot(h string) (string, bool) {
	root, ok := strings.CutPrefix(h, "Root=")
	root, _, _ = strings.Cut(root, ";")
	return root, ok && root != ""
}

// whose says which other invocation an answer belongs to, where that is
// certain.
func (k *checker) whose(i int, b Result, beside []Result) string {
	a := answer(b)
	for j, o := range beside {
		if j != i && o.RequestID != "" && strings.Contains(a, o.RequestID) {
			return fmt.Sprintf(", with the request ID of event %d", j)
		}
		if root, ok := traceRoot(o.TraceID); j != i && ok && strings.Contains(a, root) {
			return fmt.Sprintf(", with the trace of event %d", j)
		}
	}
	// Another event's answer only when it is that event's alone, and no
	// other event answers so alone: an answer of no event (a flag) is none's.
	owner, owners := -1, 0
	for j := range k.alone {
		if k.known[j] && !k.varies[j] && k.differs(j, k.alone[j], b) == nil {
			owner, owners = j, owners+1
		}
	}
	if owners == 1 && owner != i {
		return fmt.Sprintf(", the answer of event %d", owner)
	}
	return ""
}

// lines checks the log lines and metric documents of event i's invocation
// b: another's request ID in them, or a value that only another event
// wrote alone.
func (k *checker) lines(round, i int, b Result, beside []Result) {
	k.tb.Helper()
	for _, l := range append(append([]string(nil), b.Logs...), b.Metrics...) {
		for j, o := range beside {
			if j == i {
				continue
			}
			if o.RequestID != "" && strings.Contains(l, o.RequestID) {
				k.report(hintLine, "a line of event %d %s carries the request ID of event %d (round %d):\n  %s",
					i, k.event(i), j, round, l)
			} else if root, ok := traceRoot(o.TraceID); ok && strings.Contains(l, root) {
				k.report(hintLine, "a line of event %d %s carries the trace of event %d (round %d):\n  %s",
					i, k.event(i), j, round, l)
			}
		}
		for _, v := range lineValues(l) {
			if !k.known[i] || k.aloneValues[i][v] {
				continue
			}
			if j, ok := k.owner[v]; ok && j != i {
				k.report(hintLine, "a line of event %d %s carries %s, which event %d wrote alone (round %d):\n  %s",
					i, k.event(i), v, j, round, l)
				break
			}
		}
	}
}

// learnAlone indexes the values of each event's lines served alone, and
// which are one event's alone: those are the values that name it.
func (k *checker) learnAlone() {
	k.aloneValues = make([]map[string]bool, len(k.alone))
	seen := map[string]int{} // value: the event that wrote it, -1 for several
	for i, runs := range k.runs {
		k.aloneValues[i] = map[string]bool{}
		for _, l := range aloneLines(runs) {
			for _, v := range lineValues(l) {
				if k.aloneValues[i][v] {
					continue
				}
				k.aloneValues[i][v] = true
				if j, ok := seen[v]; ok && j != i {
					seen[v] = -1
				} else {
					seen[v] = i
				}
			}
		}
	}
	k.owner = map[string]int{}
	for v, i := range seen {
		if i >= 0 {
			k.owner[v] = i
		}
	}
}

// aloneLines are the log lines and metric documents of an event's runs
// served alone.
func aloneLines(runs []Result) []string {
	var ls []string
	for _, r := range runs {
		ls = append(append(ls, r.Logs...), r.Metrics...)
	}
	return ls
}

// lineValues are the members of a JSON line as key=value, every one of a
// repeated key, but those that differ between invocations by nature (time
// stamps, the invocation's IDs); a line that is not JSON is one value.
func lineValues(l string) []string {
	ms, ok := members([]byte(l))
	if !ok {
		return []string{l}
	}
	vs := make([]string, 0, len(ms))
	for _, m := range ms {
		switch m.key {
		case "timestamp", "requestId", "traceId", "tenantId", "_aws":
			continue
		}
		vs = append(vs, m.key+"="+string(m.value))
	}
	return vs
}

// late reports the lines written for invocations that had ended.
func (k *checker) late(lines []lateReport) {
	k.tb.Helper()
	for _, l := range lines {
		what := "log line"
		if l.Metric {
			what = "metric document"
		}
		k.report(hintLine, "a %s carrying the request ID of an invocation that had ended was written %s:\n  %s",
			what, l.When, l.Line)
	}
}

// event names event i on one line, by where it parts from the others
// (label.go); the names are made at the first failure that needs one.
func (k *checker) event(i int) string {
	if k.names == nil {
		k.names = labels(k.events)
	}
	return k.names[i]
}

// answer is what the caller reads: the payload, or the error.
func answer(r Result) string {
	if r.Err != nil {
		return "error " + r.Err.Error()
	}
	return string(r.Payload)
}
