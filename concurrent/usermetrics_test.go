package concurrent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lmigo/lmigo/concurrent/metrics"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// withStdout sends what the runtime writes to stdout to w.
func withStdout(w *syncBuffer) Option { return func(o *options) { o.stdout = w } }

// emfUnits are CloudWatch's units, as the specification's schema lists them.
var emfUnits = strings.Fields(`Seconds Microseconds Milliseconds Bytes Kilobytes Megabytes Gigabytes
	Terabytes Bits Kilobits Megabits Gigabits Terabits Percent Count Bytes/Second Kilobytes/Second
	Megabytes/Second Gigabytes/Second Terabytes/Second Bits/Second Kilobits/Second Megabits/Second
	Gigabits/Second Terabits/Second Count/Second None`)

// emfDoc is what checkEMF read of one document.
type emfDoc struct {
	namespace string
	dims      []string // the dimension set's keys
	root      map[string]any
	values    map[string][]float64
	units     map[string]string
	high      map[string]bool
}

// checkEMF checks line against the rules of CloudWatch's EMF
// specification (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
// CloudWatch_Embedded_Metric_Format_Specification.html) and lmigo's line
// bound, and returns what it holds.
func checkEMF(line []byte) (*emfDoc, error) {
	if len(line) > maxLogLine {
		return nil, fmt.Errorf("line of %d bytes, over %d", len(line), maxLogLine)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("not one JSON object: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the object")
	}
	aws, ok := root["_aws"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no _aws object")
	}
	ts, ok := aws["Timestamp"].(json.Number)
	if _, err := ts.Int64(); !ok || err != nil {
		return nil, fmt.Errorf("_aws.Timestamp %v is not an integer of milliseconds", aws["Timestamp"])
	}
	directives, ok := aws["CloudWatchMetrics"].([]any)
	if !ok || len(directives) != 1 {
		return nil, fmt.Errorf("CloudWatchMetrics is not an array of one directive: %v", aws["CloudWatchMetrics"])
	}
	dir, ok := directives[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the directive is not an object")
	}
	d := &emfDoc{root: root, values: map[string][]float64{}, units: map[string]string{}, high: map[string]bool{}}
	if d.namespace, ok = dir["Namespace"].(string); !ok || d.namespace == "" || len(d.namespace) > 1024 {
		return nil, fmt.Errorf("Namespace %v", dir["Namespace"])
	}
	sets, ok := dir["Dimensions"].([]any)
	if !ok || len(sets) < 1 {
		return nil, fmt.Errorf("Dimensions is not an array of dimension sets")
	}
	for _, set := range sets {
		keys, ok := set.([]any)
		if !ok || len(keys) > 30 {
			return nil, fmt.Errorf("dimension set %v: not an array of at most 30 keys", set)
		}
		for _, k := range keys {
			key, ok := k.(string)
			if !ok || key == "" || len(key) > 250 {
				return nil, fmt.Errorf("dimension key %v", k)
			}
			v, ok := root[key].(string)
			if !ok || v == "" || len(v) > 1024 {
				return nil, fmt.Errorf("dimension %s: root member %v is not a string of 1..1024", key, root[key])
			}
			d.dims = append(d.dims, key)
		}
	}
	defs, ok := dir["Metrics"].([]any)
	if !ok || len(defs) == 0 || len(defs) > 100 {
		return nil, fmt.Errorf("Metrics is not an array of 1..100 definitions")
	}
	for _, def := range defs {
		m, ok := def.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("metric definition %v", def)
		}
		name, ok := m["Name"].(string)
		if !ok || name == "" || len(name) > 255 {
			return nil, fmt.Errorf("metric name %v: not 1..255 bytes", m["Name"])
		}
		if _, dup := d.values[name]; dup {
			return nil, fmt.Errorf("metric %s defined twice", name)
		}
		unit, ok := m["Unit"].(string)
		if !ok || !slices.Contains(emfUnits, unit) {
			return nil, fmt.Errorf("metric %s: unit %v", name, m["Unit"])
		}
		d.units[name] = unit
		if r, set := m["StorageResolution"]; set {
			if r != json.Number("1") && r != json.Number("60") {
				return nil, fmt.Errorf("metric %s: StorageResolution %v", name, r)
			}
			d.high[name] = r == json.Number("1")
		}
		switch v := root[name].(type) {
		case json.Number:
			f, err := v.Float64()
			if err != nil {
				return nil, fmt.Errorf("metric %s: %v", name, err)
			}
			d.values[name] = []float64{f}
		case []any:
			if len(v) == 0 || len(v) > 100 {
				return nil, fmt.Errorf("metric %s: %d values, want 1..100", name, len(v))
			}
			for _, e := range v {
				n, ok := e.(json.Number)
				f, err := n.Float64()
				if !ok || err != nil {
					return nil, fmt.Errorf("metric %s: value %v is not a number", name, e)
				}
				d.values[name] = append(d.values[name], f)
			}
		default:
			return nil, fmt.Errorf("metric %s: root member %v is not a number or an array of numbers", name, root[name])
		}
	}
	return d, nil
}

// emfLines checks every line of out and returns the documents by request ID.
func emfLines(t *testing.T, out string) map[string][]*emfDoc {
	t.Helper()
	docs := map[string][]*emfDoc{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		d, err := checkEMF(sc.Bytes())
		if err != nil {
			t.Fatalf("invalid EMF: %v\n%.300s", err, sc.Text())
		}
		id, _ := d.root["requestId"].(string)
		docs[id] = append(docs[id], d)
	}
	return docs
}

// TestUserMetricsN64 serves invocations at N=64 that each record metrics,
// dimensions and metadata of their own (some past EMF's limits of 100
// metrics and 100 values per metric), and checks that every line the
// runtime wrote is a valid EMF document, that each carries its own
// invocation's values and no other's, that every value recorded is
// written once, and that ColdStart is written once.
func TestUserMetricsN64(t *testing.T) {
	api := newAPI(t, rapitest.Options{Queue: true})
	out := new(syncBuffer)
	handler := func(ctx context.Context, i int) (string, error) {
		add := func(err error) {
			if err != nil {
				panic(err)
			}
		}
		add(metrics.AddDimension(ctx, "Shard", "s"+strconv.Itoa(i%4)))
		add(metrics.AddMetadata(ctx, "invocation", i))
		add(metrics.Add(ctx, "Orders", metrics.Count, float64(i)))
		add(metrics.AddHighResolution(ctx, "Latency"+strconv.Itoa(i), metrics.Milliseconds, float64(i)+0.5))
		if i%16 == 0 {
			// Past the limits: 150 metrics, one of them with 250 values.
			for k := range 150 {
				add(metrics.Add(ctx, fmt.Sprintf("Many%d", k), metrics.None, float64(i*1000+k)))
			}
			for range 249 {
				add(metrics.Add(ctx, "Orders", metrics.Count, float64(i)))
			}
		}
		return RequestID(ctx), nil
	}
	e := env{"AWS_LAMBDA_MAX_CONCURRENCY": "64", "POWERTOOLS_METRICS_NAMESPACE": "Shop",
		"POWERTOOLS_SERVICE_NAME": "orders", "AWS_LAMBDA_FUNCTION_NAME": "fn"}
	serve(t, api, e, handler, withStdout(out))

	const total = 256
	ids := make([]string, total)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for i := g; i < total; i += 64 {
				r := invoke(t, api, strconv.Itoa(i))
				if r.Err != nil {
					t.Errorf("invocation %d: %v", i, r.Err)
					return
				}
				ids[i] = r.RequestID
			}
		})
	}
	wg.Wait()
	docs := emfLines(t, out.String())
	cold := 0
	for i, id := range ids {
		want := map[string][]float64{"Orders": {float64(i)}, "Latency" + strconv.Itoa(i): {float64(i) + 0.5}}
		if i%16 == 0 {
			want["Orders"] = make([]float64, 250)
			for k := range want["Orders"] {
				want["Orders"][k] = float64(i)
			}
			for k := range 150 {
				want[fmt.Sprintf("Many%d", k)] = []float64{float64(i*1000 + k)}
			}
		}
		got := map[string][]float64{}
		for _, d := range docs[id] {
			if d.values["ColdStart"] != nil {
				cold++
				if len(d.values) != 1 || d.root["function_name"] != "fn" || d.root["service"] != "orders" {
					t.Errorf("ColdStart document %v", d.root)
				}
				continue
			}
			if d.namespace != "Shop" || d.root["service"] != "orders" || d.root["Shard"] != "s"+strconv.Itoa(i%4) ||
				d.root["invocation"] != json.Number(strconv.Itoa(i)) || strings.Join(d.dims, ",") != "Shard,service" {
				t.Errorf("invocation %d: document of another invocation, or without its dimensions: %v", i, d.root)
			}
			if _, ok := d.values["Latency"+strconv.Itoa(i)]; ok && !d.high["Latency"+strconv.Itoa(i)] {
				t.Errorf("invocation %d: Latency is not high resolution", i)
			}
			for name, vs := range d.values {
				got[name] = append(got[name], vs...)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("invocation %d: values %v\nwant %v", i, got, want)
		}
	}
	if cold != 1 {
		t.Errorf("%d ColdStart documents, want 1", cold)
	}
}

// TestUserMetricsDisabled: with POWERTOOLS_METRICS_DISABLED=true the calls
// succeed, namespace or not, still refuse what could not be written, and
// nothing is written, ColdStart included.
func TestUserMetricsDisabled(t *testing.T) {
	for _, namespace := range []string{"Shop", ""} {
		t.Run("namespace "+namespace, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{Queue: true})
			out := new(syncBuffer)
			handler := func(ctx context.Context, i int) (string, error) {
				if err := metrics.AddDimension(ctx, "Shard", "s1"); err != nil {
					return "", err
				}
				if err := metrics.Add(ctx, "Orders", metrics.Count, float64(i)); err != nil {
					return "", err
				}
				if err := metrics.Add(ctx, "Orders", "Furlongs", 1); err == nil {
					return "", fmt.Errorf("a unit not in CloudWatch's list was taken")
				}
				return "ok", nil
			}
			e := env{"AWS_LAMBDA_MAX_CONCURRENCY": "2", "POWERTOOLS_METRICS_NAMESPACE": namespace,
				"POWERTOOLS_METRICS_DISABLED": "true", "AWS_LAMBDA_FUNCTION_NAME": "fn"}
			serve(t, api, e, handler, withStdout(out))
			for i := range 4 {
				if r := invoke(t, api, strconv.Itoa(i)); r.Err != nil || string(r.Body) != `"ok"` {
					t.Fatalf("invocation %d: %s %v", i, r.Body, r.Err)
				}
			}
			if s := out.String(); strings.Contains(s, "_aws") {
				t.Errorf("metrics written while disabled:\n%s", s)
			}
		})
	}
}
