//go:build !race

package rapi

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// One Next + Respond (or Fail) on a warm Conn: the only allocation is the
// string block holding RequestID, TraceID and InvocationID (FunctionARN and
// ContentType are interned). The test server allocates nothing per request.
//
// The same with a queued poll: the GET rides in the POST's write and Next only
// reads, so queueing adds no allocation. Nor does the runtime's pattern:
// polls under one long-lived context, answers under context.Background
// (an answer must not be cut off by shutdown); the poll's registration
// stays, dormant, across the answer, instead of one AfterFunc per round.
func TestAllocsNextRespond(t *testing.T) {
	measure := func(queue, background bool) (respond, fail float64) {
		srv := newTestServer(t, apiHandler([]byte(`{"key":"value"}`)))
		cn := srv.client(t).Conn()
		defer cn.Close()
		if queue {
			queueOnly(cn)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		postCtx := ctx
		if background {
			postCtx = context.Background()
		}
		var inv Invocation
		round := func() {
			if err := cn.Next(ctx, &inv); err != nil {
				t.Fatal(err)
			}
			if err := cn.Respond(postCtx, &inv, inv.Payload, "application/json", queueOf(cn)); err != nil {
				t.Fatal(err)
			}
		}
		round()
		respond = testing.AllocsPerRun(2000, round)
		errBody := []byte(`{"errorMessage":"x"}`)
		fail = testing.AllocsPerRun(500, func() {
			if err := cn.Next(ctx, &inv); err != nil {
				t.Fatal(err)
			}
			if err := cn.Fail(postCtx, &inv, "Handler.Error", errBody, nil, queueOf(cn)); err != nil {
				t.Fatal(err)
			}
		})
		if srv.accepts.Load() != 1 {
			t.Fatalf("accepts = %d", srv.accepts.Load())
		}
		return respond, fail
	}
	baseR, baseF := measure(false, false)
	if baseR > 1 {
		t.Fatalf("Next+Respond allocates %.2f times, want <= 1 (the Invocation strings)", baseR)
	}
	if baseF > 1 {
		t.Fatalf("Next+Fail allocates %.2f times, want <= 1", baseF)
	}
	r, f := measure(true, false)
	t.Logf("Next+Respond: %.2f allocs queued, %.2f not; Next+Fail: %.2f queued, %.2f not", r, baseR, f, baseF)
	if r > baseR || r > 1 || f > baseF || f > 1 {
		t.Fatalf("queueing allocates more: Next+Respond %.2f (without %.2f), Next+Fail %.2f (without %.2f)", r, baseR, f, baseF)
	}
	if r, f := measure(true, true); r > 1 || f > 1 {
		t.Fatalf("answers under context.Background: Next+Respond %.2f allocs, Next+Fail %.2f, want <= 1", r, f)
	}
}

func TestAllocsBuildRequests(t *testing.T) {
	p := testPrefixes()
	var r request
	body := []byte(`{"ok":true}`)
	cause := []byte(`{"paths":[]}`)
	buildResponse(&r, p, &Invocation{RequestID: testRequestID}, "application/json", body)
	if a := testing.AllocsPerRun(100, func() {
		buildResponse(&r, p, &Invocation{RequestID: testRequestID}, "application/json", body)
		buildError(&r, p, &Invocation{RequestID: testRequestID}, "Handler.Error", body, cause)
	}); a != 0 {
		t.Fatalf("request building allocates %.1f times", a)
	}
}

// Lazy answers cost no allocation: the low-water mark is set through a
// raw connection and a function kept per Conn.
func TestAllocsNextRespondLazy(t *testing.T) {
	var inv Invocation
	cn := lazyConn(t, newTestServer(t, apiHandler([]byte(`{"key":"value"}`))), &inv)
	ctx := t.Context()
	marked := false
	round := func() {
		if err := cn.Respond(ctx, &inv, inv.Payload, "application/json", queueOf(cn)); err != nil {
			t.Fatal(err)
		}
		marked = cn.pipe.lowatOn
		if err := cn.Next(ctx, &inv); err != nil {
			t.Fatal(err)
		}
	}
	round() // learns the size of the 202
	a := testing.AllocsPerRun(2000, round)
	if !marked {
		t.Fatal("the low-water mark is not set while the answer waits")
	}
	if a > 1 {
		t.Fatalf("Respond+Next with a lazy answer: %.2f allocs, want at most 1", a)
	}
}

// A streamed answer on a warm Conn allocates nothing of its own, however
// many chunks it has, with or without error trailers and with a queued poll:
// Next + Stream costs what Next + Respond costs, the Invocation strings.
func TestAllocsNextStream(t *testing.T) {
	srv := newTestServer(t, apiHandler([]byte(`{}`)))
	cn := srv.client(t).Conn()
	defer cn.Close()
	queueOnly(cn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inv Invocation
	chunks := make([]string, 64)
	for i := range chunks {
		chunks[i] = strings.Repeat("c", 100+i*500)
	}
	body := &pieces{p: chunks}
	ed := errorDoc{typ: "Function.E", doc: []byte(`{"errorMessage":"late"}`)}
	onError := ed.fn
	late := errors.New("late")
	round := func(err error) func() {
		return func() {
			if err := cn.Next(ctx, &inv); err != nil {
				t.Fatal(err)
			}
			*body = pieces{p: chunks, err: err}
			if err := cn.Stream(ctx, &inv, "text/plain", body, onError, queuePtr(cn)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ok, failed := round(nil), round(late)
	ok()
	failed()
	if a := testing.AllocsPerRun(200, ok); a > 1 {
		t.Fatalf("Next+Stream of %d chunks allocates %.2f times, want <= 1", len(chunks), a)
	}
	if a := testing.AllocsPerRun(200, failed); a > 1 {
		t.Fatalf("Next+Stream ending in trailers allocates %.2f times, want <= 1", a)
	}
	// A *bytes.Reader is written out from its own bytes (one writev).
	big := []byte(strings.Repeat("b", 1<<20))
	br := bytes.NewReader(big)
	writerTo := func() {
		if err := cn.Next(ctx, &inv); err != nil {
			t.Fatal(err)
		}
		br.Reset(big)
		if err := cn.Stream(ctx, &inv, "text/plain", br, onError, queuePtr(cn)); err != nil {
			t.Fatal(err)
		}
	}
	writerTo()
	if a := testing.AllocsPerRun(100, writerTo); a > 1 {
		t.Fatalf("Next+Stream of a 1 MiB *bytes.Reader allocates %.2f times, want <= 1", a)
	}
	if ed.calls == 0 || srv.accepts.Load() != 1 {
		t.Fatalf("onError calls %d, accepts %d", ed.calls, srv.accepts.Load())
	}
}

// BenchmarkStream: 1 MiB read as 32 KiB pieces and streamed as 32
// chunks, next to the same 1 MiB posted buffered with Respond.
func BenchmarkStream(b *testing.B) {
	big := strings.Repeat("s", 1<<20)
	pieces32 := make([]string, 0, 32)
	for i := 0; i < len(big); i += streamChunk {
		pieces32 = append(pieces32, big[i:i+streamChunk])
	}
	srv := newTestServer(b, apiHandler(nil))
	cn := srv.client(b).Conn()
	defer cn.Close()
	ctx := context.Background()
	var ed errorDoc
	onError := ed.fn
	body := &pieces{}
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		b.ReportAllocs()
		for b.Loop() {
			*body = pieces{p: pieces32}
			if err := cn.Stream(ctx, &Invocation{RequestID: testRequestID}, "", body, onError, queuePtr(cn)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("respond", func(b *testing.B) {
		buf := []byte(big)
		b.SetBytes(int64(len(big)))
		b.ReportAllocs()
		for b.Loop() {
			if err := cn.Respond(ctx, &Invocation{RequestID: testRequestID}, buf, "", queueOf(cn)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
