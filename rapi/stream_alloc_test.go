//go:build !race

package rapi

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

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
