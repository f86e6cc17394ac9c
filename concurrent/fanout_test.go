package concurrent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent/internal/emf"
	"github.com/lmigo/lmigo/concurrent/metrics"
	"github.com/lmigo/lmigo/rapi/rapitest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

type fanoutPanic struct{ n int }

// TestFanOutPanicN64 serves 256 invocations at N=64 whose handlers fan
// out three parts of their answer with Go; in every eighth one a part
// panics, and the handler returns without Wait. Those answer a function
// error of the panic's type, logged with their request ID; the others
// answer their own distinct payloads; the process goes on, and nothing
// is left running once Run has returned.
func TestFanOutPanicN64(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	api, err := rapitest.New(rapitest.Options{Queue: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.ErrorLevel)
	handler := func(ctx context.Context, i int) (string, error) {
		parts := make([]string, 3)
		for k := range parts {
			if err := Go(ctx, func(context.Context) error {
				if i%8 == 0 && k == 1 {
					panic(fanoutPanic{i})
				}
				parts[k] = fmt.Sprintf("%d.%d", i, k)
				return nil
			}); err != nil {
				return "", err
			}
		}
		if i%8 == 0 {
			return "returned before its work", nil
		}
		if err := Wait(ctx); err != nil {
			return "", err
		}
		return strings.Join(parts, ","), nil
	}
	rt, err := New(handler, WithLookupEnv(env{"AWS_LAMBDA_MAX_CONCURRENCY": "64",
		"AWS_LAMBDA_RUNTIME_API": api.Addr()}.lookup), WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	const total = 256
	ids := make([]string, total)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for i := g; i < total; i += 64 {
				r := invoke(t, api, strconv.Itoa(i))
				ids[i] = r.RequestID
				if i%8 == 0 {
					if r.Err == nil || r.Err.Type != "fanoutPanic" || !strings.Contains(string(r.Err.Body), fmt.Sprintf(`"errorMessage":"{%d}"`, i)) {
						t.Errorf("invocation %d: %s %v, want the panic's error", i, r.Body, r.Err)
					}
					continue
				}
				want, _ := json.Marshal(fmt.Sprintf("%d.0,%d.1,%d.2", i, i, i))
				if r.Err != nil || string(r.Body) != string(want) {
					t.Errorf("invocation %d: %s %v, want %s", i, r.Body, r.Err, want)
				}
			}
		})
	}
	wg.Wait()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_ = api.Close()
	for i := 0; i < total; i += 8 {
		if n := logs.FilterMessage("invocation panicked").FilterField(zap.String(keyRequestID, ids[i])).Len(); n != 1 {
			t.Errorf("invocation %d: %d lines of its panic with its request ID, want 1", i, n)
		}
	}
	goleak.VerifyNone(t, ignore)
}

// TestFanOutWaitedBeforeAnswer: a handler that returns before its work
// ends is answered only after the work has ended. The work records a
// metric once it is let go, after the handler has returned; the runtime
// writes the invocation's metrics before its answer, so the answer finds
// the work's metric written only if it waited for the work.
func TestFanOutWaitedBeforeAnswer(t *testing.T) {
	api := newAPI(t, rapitest.Options{})
	out := new(syncBuffer)
	returned := make(chan struct{})
	release := make(chan struct{})
	var lateErr atomic.Value
	serve(t, api, env{"POWERTOOLS_METRICS_NAMESPACE": "Shop"}, func(ctx context.Context) (string, error) {
		_ = Go(ctx, func(ctx context.Context) error {
			<-release
			if err := metrics.Add(ctx, "WorkDone", metrics.Count, 1); err != nil {
				lateErr.Store(err)
			}
			return nil
		})
		close(returned)
		return "ok", nil
	}, withStdout(out))
	go func() {
		<-returned
		close(release)
	}()
	r := invoke(t, api, "{}")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if err, _ := lateErr.Load().(error); err != nil {
		t.Fatalf("the work ran after its invocation ended: %v", err)
	}
	docs := emfLines(t, out.String())
	if len(docs[r.RequestID]) == 0 || docs[r.RequestID][0].values["WorkDone"] == nil {
		t.Fatalf("answered before the work's metric was written: %q", out.String())
	}
}

// TestFanOutBound: one invocation never runs more than maxWork functions
// at once, however many it starts.
func TestFanOutBound(t *testing.T) {
	api := newAPI(t, rapitest.Options{})
	var running, most atomic.Int64
	serve(t, api, env{}, func(ctx context.Context) (int64, error) {
		for range 4 * maxWork {
			if err := Go(ctx, func(context.Context) error {
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				running.Add(-1)
				return nil
			}); err != nil {
				return 0, err
			}
		}
		return 0, Wait(ctx)
	})
	if r := invoke(t, api, "{}"); r.Err != nil {
		t.Fatal(r.Err)
	}
	if m := most.Load(); m > maxWork {
		t.Fatalf("%d functions ran at once, want at most %d", m, maxWork)
	}
}

// TestFanOutErrors: an error of the work that the handler did not take
// with Wait fails the invocation; one it took does not; Go after the
// answer returns ErrLateWork; outside an invocation Go runs f at once and
// returns its panic.
func TestFanOutErrors(t *testing.T) {
	api := newAPI(t, rapitest.Options{Queue: true})
	late := make(chan error, 1)
	serve(t, api, env{}, func(ctx context.Context, mode string) (string, error) {
		_ = Go(ctx, func(context.Context) error { return fmt.Errorf("work failed") })
		switch mode {
		case "wait":
			return fmt.Sprint(Wait(ctx)), nil
		case "late":
			go func() {
				_ = Wait(ctx)
				<-ctx.Done()
				late <- Go(ctx, func(context.Context) error { return nil })
			}()
		}
		return "ok", nil
	})
	if r := invoke(t, api, `"wait"`); r.Err != nil || string(r.Body) != `"work failed"` {
		t.Errorf("waited: %s %v", r.Body, r.Err)
	}
	if r := invoke(t, api, `"no"`); r.Err == nil || !strings.Contains(string(r.Err.Body), "work failed") {
		t.Errorf("not waited: %s %v, want the work's error", r.Body, r.Err)
	}
	r := invoke(t, api, `"late"`)
	if err := <-late; err != ErrLateWork {
		t.Errorf("Go after the answer: %v, want ErrLateWork", err)
	}
	_ = r
	err := Go(context.Background(), func(context.Context) error { panic("outside") })
	if pe, ok := err.(*PanicError); !ok || pe.Value != "outside" {
		t.Errorf("outside an invocation: %v, want its panic", err)
	}
}

// TestFanOutFailsStream: work a streaming handler started, still running
// when its handler returned the reader, that panics or fails is waited for
// when the reader ends, and its failure goes in the stream's error
// trailers after the bytes streamed so far, as a reader's own failure
// does; a stream whose work succeeds ends as it was.
func TestFanOutFailsStream(t *testing.T) {
	for _, form := range []string{"reader", "writerto"} {
		t.Run(form, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"}, func(ctx context.Context, ev struct{ Do string }) (io.Reader, error) {
				release := make(chan struct{})
				if err := Go(ctx, func(context.Context) error {
					<-release // after the handler returned
					switch ev.Do {
					case "panic":
						panic(fanoutPanic{7})
					case "fail":
						return fmt.Errorf("work failed")
					}
					return nil
				}); err != nil {
					return nil, err
				}
				close(release)
				body := bytes.NewReader([]byte("streamed " + ev.Do))
				if form == "writerto" {
					return body, nil
				}
				return onlyReader{body}, nil
			})
			for _, tc := range []struct{ do, errType, msg string }{
				{"panic", "fanoutPanic", "{7}"},
				{"fail", "errorString", "work failed"},
				{"ok", "", ""},
			} {
				r := invoke(t, api, fmt.Sprintf(`{"Do":%q}`, tc.do))
				if !strings.HasPrefix(string(r.Body), "streamed "+tc.do) {
					t.Errorf("%s: body %q", tc.do, r.Body)
				}
				switch {
				case tc.errType == "" && r.Err != nil:
					t.Errorf("%s: %v, want no error", tc.do, r.Err)
				case tc.errType != "" && (r.Err == nil || r.Err.Type != tc.errType || !strings.Contains(string(r.Err.Body), tc.msg)):
					t.Errorf("%s: %+v, want %s with %q in the trailers", tc.do, r.Err, tc.errType, tc.msg)
				}
			}
		})
	}
}

// onlyReader hides its reader's WriteTo.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

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

// BenchmarkInvocationMetrics: what one invocation's metrics cost, from its
// context to its documents written (to io.Discard): none recorded, and a
// dimension, a metadata field and three metrics.
func BenchmarkInvocationMetrics(b *testing.B) {
	rt := &Runtime{emf: &emf.Env{Namespace: "Shop", Service: "orders", Out: io.Discard, Limit: maxLogLine}}
	rt.emf.TakeColdStart()
	base := context.WithValue(context.Background(), emf.EnvKey{}, rt.emf)
	log := zap.NewNop()
	deadline := time.Now().Add(time.Hour)
	lc := &lambdacontext.LambdaContext{AwsRequestID: "8476a536-e9f4-11e8-9739-2dfe598c3fcd"}
	for _, record := range []bool{false, true} {
		name := "none"
		if record {
			name = "recorded"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := newInvocation(base, deadline, lc, "", log)
				if record {
					_ = metrics.AddDimension(c, "Operation", "checkout")
					_ = metrics.AddMetadata(c, "orderId", "o-1234")
					_ = metrics.Add(c, "Orders", metrics.Count, 1)
					_ = metrics.Add(c, "Amount", metrics.None, 42.5)
					_ = metrics.AddHighResolution(c, "Latency", metrics.Milliseconds, 3.25)
				}
				if err := rt.finish(c, nil); err != nil {
					b.Fatal(err)
				}
				c.cancel()
			}
		})
	}
}
