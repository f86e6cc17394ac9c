package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/zap"
)

// validateEMF checks one log event against the CloudWatch Embedded Metric
// Format specification (Amazon CloudWatch User Guide, "Specification:
// Embedded metric format", and the JSON schema it gives):
//
//   - the event is one valid JSON object with nothing before or after it,
//     at most 1 MB;
//   - the root has _aws, an object with exactly Timestamp (an integer,
//     milliseconds since the epoch) and CloudWatchMetrics (an array of
//     MetricDirective);
//   - a MetricDirective has exactly Namespace (a string, 1..1024
//     characters; CloudWatch takes 1..255 and no leading colon),
//     Dimensions (an array of at least one DimensionSet) and Metrics (an
//     array of at most 100 MetricDefinition);
//   - a DimensionSet is an array of 0..30 strings of 1..250 characters,
//     each naming a root member whose value is a string of at most 1024
//     characters (CloudWatch also refuses an empty dimension value);
//   - a MetricDefinition has Name (a string of 1..1024 characters) and
//     optionally Unit (one of CloudWatch's units) and StorageResolution (an
//     integer, 1 or 60), nothing else;
//   - each metric Name names a root member (not nested) whose value is a
//     number or an array of at most 100 numbers.
func validateEMF(event []byte) error {
	if len(event) > 1<<20 {
		return fmt.Errorf("event of %d bytes, above 1 MB", len(event))
	}
	dec := json.NewDecoder(bytes.NewReader(event))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	aws, ok := root["_aws"].(map[string]any)
	if !ok {
		return errors.New("_aws missing or not an object")
	}
	if err := onlyMembers(aws, []string{"Timestamp", "CloudWatchMetrics"}); err != nil {
		return fmt.Errorf("_aws: %w", err)
	}
	ts, ok := aws["Timestamp"].(json.Number)
	if !ok {
		return errors.New("_aws.Timestamp missing or not a number")
	}
	if _, err := strconv.ParseInt(string(ts), 10, 64); err != nil {
		return fmt.Errorf("_aws.Timestamp %s is not an integer of milliseconds", ts)
	}
	directives, ok := aws["CloudWatchMetrics"].([]any)
	if !ok {
		return errors.New("_aws.CloudWatchMetrics missing or not an array")
	}
	for i, d := range directives {
		if err := validateDirective(root, d); err != nil {
			return fmt.Errorf("CloudWatchMetrics[%d]: %w", i, err)
		}
	}
	return nil
}

func onlyMembers(obj map[string]any, required []string, optional ...string) error {
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			return fmt.Errorf("member %s missing", k)
		}
	}
	for k := range obj {
		if !contains(required, k) && !contains(optional, k) {
			return fmt.Errorf("member %s not allowed", k)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var cloudWatchUnits = strings.Fields(`Seconds Microseconds Milliseconds Bytes Kilobytes Megabytes
	Gigabytes Terabytes Bits Kilobits Megabits Gigabits Terabits Percent Count Bytes/Second
	Kilobytes/Second Megabytes/Second Gigabytes/Second Terabytes/Second Bits/Second
	Kilobits/Second Megabits/Second Gigabits/Second Terabits/Second Count/Second None`)

func validateDirective(root map[string]any, v any) error {
	d, ok := v.(map[string]any)
	if !ok {
		return errors.New("not an object")
	}
	if err := onlyMembers(d, []string{"Namespace", "Dimensions", "Metrics"}); err != nil {
		return err
	}
	ns, ok := d["Namespace"].(string)
	if !ok || len(ns) < 1 || len(ns) > 255 || ns[0] == ':' {
		return fmt.Errorf("Namespace %v", d["Namespace"])
	}
	sets, ok := d["Dimensions"].([]any)
	if !ok || len(sets) < 1 {
		return fmt.Errorf("Dimensions %v: want an array of at least one DimensionSet", d["Dimensions"])
	}
	for _, s := range sets {
		keys, ok := s.([]any)
		if !ok || len(keys) > 30 {
			return fmt.Errorf("DimensionSet %v: want an array of at most 30 keys", s)
		}
		for _, k := range keys {
			name, ok := k.(string)
			if !ok || len(name) < 1 || len(name) > 250 {
				return fmt.Errorf("dimension key %v", k)
			}
			val, ok := root[name].(string)
			if !ok || len(val) < 1 || len(val) > 1024 {
				return fmt.Errorf("dimension %s: target %v is not a string of 1..1024 characters", name, root[name])
			}
		}
	}
	defs, ok := d["Metrics"].([]any)
	if !ok || len(defs) > 100 {
		return fmt.Errorf("Metrics %v: want an array of at most 100 definitions", d["Metrics"])
	}
	for _, x := range defs {
		def, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("MetricDefinition %v is not an object", x)
		}
		if err := onlyMembers(def, []string{"Name"}, "Unit", "StorageResolution"); err != nil {
			return fmt.Errorf("MetricDefinition: %w", err)
		}
		name, ok := def["Name"].(string)
		if !ok || len(name) < 1 || len(name) > 1024 {
			return fmt.Errorf("metric Name %v", def["Name"])
		}
		if u, has := def["Unit"]; has {
			if s, ok := u.(string); !ok || !contains(cloudWatchUnits, s) {
				return fmt.Errorf("metric %s: Unit %v is not a CloudWatch unit", name, u)
			}
		}
		if r, has := def["StorageResolution"]; has {
			if n, ok := r.(json.Number); !ok || (n != "1" && n != "60") {
				return fmt.Errorf("metric %s: StorageResolution %v", name, r)
			}
		}
		switch t := root[name].(type) {
		case json.Number:
		case []any:
			if len(t) > 100 {
				return fmt.Errorf("metric %s: %d values, at most 100", name, len(t))
			}
			for _, e := range t {
				if _, ok := e.(json.Number); !ok {
					return fmt.Errorf("metric %s: value %v is not a number", name, e)
				}
			}
		default:
			return fmt.Errorf("metric %s: target %v is not a number or an array of numbers", name, root[name])
		}
	}
	return nil
}

// TestValidateEMF: the validator accepts the specification's own example
// and rejects documents that break each rule.
func TestValidateEMF(t *testing.T) {
	const example = `{"_aws":{"Timestamp":1574109732004,"CloudWatchMetrics":[{"Namespace":"lambda-function-metrics",` +
		`"Dimensions":[["functionVersion"]],"Metrics":[{"Name":"time","Unit":"Milliseconds","StorageResolution":60}]}]},` +
		`"functionVersion":"$LATEST","time":100,"requestId":"989ffbf8-9ace-4817-a57c-e4dd734019ee"}`
	if err := validateEMF([]byte(example)); err != nil {
		t.Fatalf("the specification's example: %v", err)
	}
	tests := []struct{ name, old, new string }{
		{"not JSON", `{"_aws"`, `{_aws`},
		{"trailing data", `"requestId"`, `"x":1}{"requestId"`},
		{"no _aws", `"_aws"`, `"aws"`},
		{"no timestamp", `"Timestamp":1574109732004,`, ``},
		{"timestamp a string", `1574109732004`, `"1574109732004"`},
		{"timestamp in seconds with a fraction", `1574109732004`, `1574109732.004`},
		{"extra metadata", `"Timestamp"`, `"Extra":1,"Timestamp"`},
		{"no directives", `"CloudWatchMetrics":[{`, `"CW":[{`},
		{"no namespace", `"Namespace":"lambda-function-metrics",`, ``},
		{"empty namespace", `"lambda-function-metrics"`, `""`},
		{"no dimension sets", `[["functionVersion"]]`, `[]`},
		{"dimension target missing", `"functionVersion":"$LATEST",`, ``},
		{"dimension target a number", `"functionVersion":"$LATEST"`, `"functionVersion":7`},
		{"dimension target empty", `"functionVersion":"$LATEST"`, `"functionVersion":""`},
		{"31 dimensions", `[["functionVersion"]]`, `[[` + strings.Repeat(`"functionVersion",`, 30) + `"functionVersion"]]`},
		{"metric target missing", `"time":100,`, ``},
		{"metric target a string", `"time":100`, `"time":"100"`},
		{"metric target nested", `"time":100`, `"t":{"ime":100}`},
		{"metric values not numbers", `"time":100`, `"time":[1,"2"]`},
		{"bad unit", `"Milliseconds"`, `"Millis"`},
		{"bad resolution", `"StorageResolution":60`, `"StorageResolution":30`},
		{"extra member in definition", `"Unit":`, `"Kind":"x","Unit":`},
		{"extra member in directive", `"Namespace":`, `"Region":"x","Namespace":`},
	}
	for _, tt := range tests {
		doc := strings.Replace(example, tt.old, tt.new, 1)
		if doc == example {
			t.Fatalf("%s: the replacement did not apply", tt.name)
		}
		if err := validateEMF([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %s", tt.name, doc)
		}
	}
	// Arrays of values and an empty DimensionSet are allowed.
	ok := strings.Replace(strings.Replace(example, `"time":100`, `"time":[1,2.5,3]`, 1), `[["functionVersion"]]`, `[[]]`, 1)
	if err := validateEMF([]byte(ok)); err != nil {
		t.Errorf("%v: %s", err, ok)
	}
}

// emfValues checks doc and returns its metric values by name.
func emfValues(t *testing.T, doc string) map[string]float64 {
	t.Helper()
	if !strings.HasSuffix(doc, "\n") || strings.Count(doc, "\n") != 1 {
		t.Fatalf("document is not one line: %q", doc)
	}
	if err := validateEMF([]byte(doc)); err != nil {
		t.Fatalf("invalid EMF: %v\n%s", err, doc)
	}
	var root map[string]any
	_ = json.Unmarshal([]byte(doc), &root)
	out := map[string]float64{}
	for _, m := range emfMetrics {
		v, _ := root[m.name].(float64)
		out[m.name] = v
	}
	out["intervalMs"], _ = root["intervalMs"].(float64)
	return out
}

func TestAppendEMF(t *testing.T) {
	now := time.UnixMilli(1700000000123)
	values := []float64{12, 3, 1, 8, 1.25, 40.5, 65536, 4 << 20, 2, 5, 1}
	for _, fn := range []string{"orders", "", `we"ird\name`} {
		doc := string(appendEMF(nil, now, 90*time.Second, fn, values))
		got := emfValues(t, doc)
		for i, m := range emfMetrics {
			if got[m.name] != values[i] {
				t.Errorf("%s = %v, want %v", m.name, got[m.name], values[i])
			}
		}
		if got["intervalMs"] != 90000 || !strings.Contains(doc, `"Timestamp":1700000000123`) {
			t.Errorf("interval or timestamp wrong: %s", doc)
		}
		if want := fn != ""; strings.Contains(doc, `[["FunctionName"]]`) != want {
			t.Errorf("function %q: dimensions in %s", fn, doc)
		}
	}
}

// TestMetricsEMF: a runtime with LMIGO_METRICS=emf writes valid documents,
// one line and one write each, every interval and once at shutdown; summed
// over the documents the counts are those of the invocations served.
func TestMetricsEMF(t *testing.T) {
	const n, slots = 4, 2
	api := newAPI(t, rapitest.Options{MaxConcurrency: n, Queue: true})
	e := env{
		"AWS_LAMBDA_RUNTIME_API":     api.Addr(),
		"AWS_LAMBDA_MAX_CONCURRENCY": strconv.Itoa(n),
		"LMIGO_SLOTS":                strconv.Itoa(slots),
		"LMIGO_METRICS":              "emf",
		"AWS_LAMBDA_FUNCTION_NAME":   "orders",
	}
	rt, err := New(func(ev struct{ Mode string }) (string, error) {
		time.Sleep(5 * time.Millisecond) // so that slots are all busy at times
		switch ev.Mode {
		case "panic":
			panic("boom")
		case "error":
			return "", errors.New("failed")
		}
		return strings.Repeat("r", 2048), nil
	}, WithLookupEnv(e.lookup), WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	rt.metrics.out = rec
	rt.metrics.interval = 30 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	modes := map[string]int{"ok": 24, "error": 5, "panic": 3}
	var wg sync.WaitGroup
	for mode, count := range modes {
		for range count {
			wg.Go(func() { invoke(t, api, `{"Mode":"`+mode+`"}`) })
		}
	}
	wg.Wait()
	time.Sleep(50 * time.Millisecond) // at least one periodic document
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	docs := rec.lines(t)
	if len(docs) < 2 {
		t.Fatalf("%d documents, want periodic ones and the last", len(docs))
	}
	sum := map[string]float64{}
	maxInflight := 0.0
	for _, d := range docs {
		v := emfValues(t, d)
		for k, x := range v {
			sum[k] += x
		}
		maxInflight = max(maxInflight, v["InFlightMax"])
		if v["HeapInUse"] <= 0 || v["intervalMs"] < 0 {
			t.Errorf("document %s", d)
		}
		if !strings.Contains(d, `"FunctionName":"orders"`) {
			t.Errorf("no FunctionName dimension: %s", d)
		}
	}
	if sum["Invocations"] != 32 || sum["Errors"] != 8 || sum["Panics"] != 3 {
		t.Errorf("invocations %v, errors %v, panics %v; want 32, 8, 3", sum["Invocations"], sum["Errors"], sum["Panics"])
	}
	if maxInflight < 1 || maxInflight > slots {
		t.Errorf("in-flight high-water mark %v, want 1..%d", maxInflight, slots)
	}
	if sum["AllSlotsBusyTime"] <= 0 {
		t.Errorf("every slot never busy with %d slots and 32 invocations of 5 ms", slots)
	}
	last := emfValues(t, docs[len(docs)-1])
	if last["RetainedBufferBytes"] < 2048 || last["RetainedBufferBytes"] > float64(slots*rt.cfg.BufferRetainBytes) {
		t.Errorf("retained buffer bytes %v after 2 KiB responses", last["RetainedBufferBytes"])
	}
}

// TestMetricsOff: without LMIGO_METRICS there is nothing to count and
// nothing written.
func TestMetricsOff(t *testing.T) {
	cfg, err := limits.FromEnv(env{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:1"}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	m := newMetrics(cfg, io.Discard)
	if m != nil {
		t.Fatal("metrics on by default")
	}
	m.begin()
	m.end()
	m.failed(errors.New("x"))
	rt := &Runtime{}
	rt.startMetrics()()
}

// TestMetricsInflightMark: the high-water mark covers one interval and the
// next starts from the invocations still in flight.
func TestMetricsInflightMark(t *testing.T) {
	m := &runtimeMetrics{slots: 16, epoch: time.Now()}
	m.begin()
	m.begin()
	m.begin()
	m.end()
	m.end()
	if got := m.maxInflight.Swap(m.inflight.Load()); got != 3 {
		t.Fatalf("high-water mark %d, want 3", got)
	}
	if got := m.maxInflight.Load(); got != 1 {
		t.Fatalf("next interval starts at %d, want 1", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				m.begin()
				m.end()
			}
		})
	}
	wg.Wait()
	if hi := m.maxInflight.Load(); hi < 1 || hi > 9 || m.inflight.Load() != 1 || m.invocations.Load() != 8003 {
		t.Fatalf("mark %d, in flight %d, invocations %d", hi, m.inflight.Load(), m.invocations.Load())
	}
}

// TestMetricsAllocs: counting on the hot path allocates nothing, also
// when the clock is read (the last slot taken and given back).
func TestMetricsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := &runtimeMetrics{slots: 1, epoch: time.Now()}
	panicErr := &PanicError{Value: "x"}
	if a := testing.AllocsPerRun(1000, func() {
		m.begin()
		m.failed(panicErr)
		m.failed(nil)
		m.end()
	}); a != 0 {
		t.Errorf("%v allocations per invocation counted, want 0", a)
	}
	if m.busyTime.Load() <= 0 {
		t.Error("the only slot was busy, and no time counted")
	}
}

// TestMetricsBusyTime: time is counted only while every slot is busy,
// including a span still open when the document is written.
func TestMetricsBusyTime(t *testing.T) {
	m := &runtimeMetrics{slots: 2, epoch: time.Now()}
	m.begin()
	time.Sleep(5 * time.Millisecond) // one slot free: not counted
	m.begin()
	time.Sleep(20 * time.Millisecond)
	m.end()
	time.Sleep(5 * time.Millisecond)
	if d := m.takeBusyTime(); d < 20*time.Millisecond || d > 25*time.Millisecond+time.Second {
		t.Fatalf("busy time %v, want about 20ms", d)
	}
	m.begin()
	time.Sleep(10 * time.Millisecond)
	first := m.takeBusyTime() // still busy: counted up to now
	time.Sleep(10 * time.Millisecond)
	m.end()
	second := m.takeBusyTime()
	if first < 10*time.Millisecond || second < 10*time.Millisecond || m.takeBusyTime() != 0 {
		t.Fatalf("open span split as %v + %v", first, second)
	}
}

// BenchmarkMetricsInvocation: the counting one invocation costs, from
// every P at once (all on the same counters).
func BenchmarkMetricsInvocation(b *testing.B) {
	m := &runtimeMetrics{slots: 64, epoch: time.Now()}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.begin()
			m.end()
		}
	})
}
