package concurrent

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"runtime/pprof"
	"slices"
	"testing"

	"github.com/lmigo/lmigo/rapi"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

// TestLabelsInCPUProfile: a CPU profile taken while two invocations burn
// CPU splits by invocation. The samples of the one whose handler burns
// carry its requestId and the function's name; so do those of the
// goroutine the other's handler starts, which inherits them. Samples are
// taken per CPU time spent, so a fixed amount of work gives samples
// however loaded the machine is.
func TestLabelsInCPUProfile(t *testing.T) {
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		t.Skipf("a CPU profile is running already (go test -cpuprofile?): %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			pprof.StopCPUProfile()
		}
	}()
	api := newAPI(t, rapitest.Options{MaxConcurrency: 2})
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2", "AWS_LAMBDA_FUNCTION_NAME": "burner"},
		func(ctx context.Context, ev struct{ Child bool }) (string, error) {
			if !ev.Child {
				burnInHandler()
				return RequestID(ctx), nil
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				burnInChild()
			}()
			<-done
			return RequestID(ctx), nil
		})
	ctx, cancel := testContext(t)
	defer cancel()
	var ids [2]string
	for i, payload := range []string{`{}`, `{"Child":true}`} {
		r, err := api.Invoke(ctx, rapitest.Request{Payload: []byte(payload)})
		if err != nil || r.Err != nil {
			t.Fatalf("invoke %s: %+v, %v", payload, r, err)
		}
		ids[i] = r.RequestID
	}
	pprof.StopCPUProfile()
	stopped = true

	samples := cpuSamples(t, prof.Bytes())
	found := map[string]int{}
	for _, s := range samples {
		for _, f := range []string{"burnInHandler", "burnInChild"} {
			if slices.ContainsFunc(s.funcs, func(name string) bool { return name == "github.com/lmigo/lmigo/concurrent."+f }) {
				if s.labels["function"] != "burner" {
					t.Errorf("a sample of %s carries function=%q, want burner", f, s.labels["function"])
				}
				found[f+" "+s.labels["requestId"]]++
			}
		}
	}
	t.Logf("%d samples; labeled: %v", len(samples), found)
	for f, id := range map[string]string{"burnInHandler": ids[0], "burnInChild": ids[1]} {
		if found[f+" "+id] == 0 {
			t.Errorf("no sample of %s labeled requestId=%s: %v", f, id, found)
		}
	}
	for k := range found {
		if k != "burnInHandler "+ids[0] && k != "burnInChild "+ids[1] {
			t.Errorf("samples under the wrong labels: %s", k)
		}
	}
}

// burnInHandler and burnInChild spend about 250 ms of CPU each, named so
// that a profile tells them apart.
//
//go:noinline
func burnInHandler() { burn() }

//go:noinline
func burnInChild() { burn() }

var burnSink [32]byte

func burn() {
	buf := make([]byte, 64<<10)
	for range 3000 {
		burnSink = sha256.Sum256(buf)
		buf[0] = burnSink[0]
	}
}

// cpuSample is one sample of a CPU profile: its labels, and the functions
// on its stack.
type cpuSample struct {
	labels map[string]string
	funcs  []string
}

// cpuSamples reads the samples of a CPU profile (gzipped protocol buffers,
// profile.proto) with what little of the format the test needs.
func cpuSamples(t *testing.T, b []byte) []cpuSample {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	prof := protoFields(t, raw)
	str := func(i uint64) string {
		if i < uint64(len(prof[6])) {
			return string(prof[6][i].bytes)
		}
		return ""
	}
	funcName := map[uint64]string{} // Function: id 1, name 2
	for _, f := range prof[5] {
		m := protoFields(t, f.bytes)
		funcName[first(m[1])] = str(first(m[2]))
	}
	locFuncs := map[uint64][]string{} // Location: id 1, line 4 (Line: function_id 1)
	for _, l := range prof[4] {
		m := protoFields(t, l.bytes)
		for _, line := range m[4] {
			locFuncs[first(m[1])] = append(locFuncs[first(m[1])], funcName[first(protoFields(t, line.bytes)[1])])
		}
	}
	var out []cpuSample
	for _, s := range prof[2] { // Sample: location_id 1 (packed), label 3 (Label: key 1, str 2)
		m := protoFields(t, s.bytes)
		cs := cpuSample{labels: map[string]string{}}
		for _, id := range packed(t, m[1]) {
			cs.funcs = append(cs.funcs, locFuncs[id]...)
		}
		for _, l := range m[3] {
			lm := protoFields(t, l.bytes)
			cs.labels[str(first(lm[1]))] = str(first(lm[2]))
		}
		out = append(out, cs)
	}
	return out
}

type protoValue struct {
	varint uint64
	bytes  []byte
}

// protoFields splits a protocol buffer message into its fields by number.
func protoFields(t *testing.T, b []byte) map[int][]protoValue {
	t.Helper()
	out := map[int][]protoValue{}
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatal(errors.New("bad field key"))
		}
		b = b[n:]
		var v protoValue
		switch key & 7 {
		case 0:
			v.varint, n = binary.Uvarint(b)
		case 2:
			var l uint64
			l, n = binary.Uvarint(b)
			if n > 0 && uint64(len(b)-n) >= l {
				v.bytes = b[n : n+int(l)]
				n += int(l)
			} else {
				n = 0
			}
		case 1:
			n = 8
		case 5:
			n = 4
		default:
			n = 0
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("bad field %d", key>>3)
		}
		b = b[n:]
		out[int(key>>3)] = append(out[int(key>>3)], v)
	}
	return out
}

func first(vs []protoValue) uint64 {
	if len(vs) == 0 {
		return 0
	}
	return vs[0].varint
}

// packed reads repeated varints, packed or not.
func packed(t *testing.T, vs []protoValue) []uint64 {
	t.Helper()
	var out []uint64
	for _, v := range vs {
		if v.bytes == nil {
			out = append(out, v.varint)
			continue
		}
		for b := v.bytes; len(b) > 0; {
			x, n := binary.Uvarint(b)
			if n <= 0 {
				t.Fatal("bad packed varint")
			}
			out = append(out, x)
			b = b[n:]
		}
	}
	return out
}

// BenchmarkLabels: what the labels add to an invocation's way, alone: its
// label set and context (parentCtx), and the slot's goroutine put under
// them and back (label, unlabel).
func BenchmarkLabels(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			rt := &Runtime{baseCtx: context.Background()}
			rt.cfg.Labels, rt.cfg.FunctionName = on, "orders"
			s := &slot{rt: rt}
			inv := &rapi.Invocation{RequestID: "8476a536-e9f4-11e8-9739-000000000001"}
			b.ReportAllocs()
			for b.Loop() {
				s.label(rt.parentCtx(inv))
				s.unlabel()
			}
		})
	}
}
