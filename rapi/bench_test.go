package rapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

var benchPayload = []byte(`{"key":"value"}`)

// BenchmarkNextRespond: one invocation (GET /next + POST /response) on a
// warm connection against the loopback test server, by three clients, so
// that benchstat -col /client puts them side by side (make bench):
// rapi; rapi with a queued poll, the next GET /next written behind each POST;
// and the baseline, a well-configured net/http client.
func BenchmarkNextRespond(b *testing.B) {
	b.Run("client=rapi", func(b *testing.B) { benchNextRespond(b, false) })
	b.Run("client=rapi-queued", func(b *testing.B) { benchNextRespond(b, true) })
	b.Run("client=net-http", benchNextRespondNetHTTP)
}

func benchNextRespond(b *testing.B, queue bool) {
	srv := newTestServer(b, apiHandler(benchPayload))
	cn := srv.client(b).Conn()
	defer cn.Close()
	if queue {
		queueOnly(cn)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inv Invocation
	b.ReportAllocs()
	for b.Loop() {
		if err := cn.Next(ctx, &inv); err != nil {
			b.Fatal(err)
		}
		if err := cn.Respond(context.Background(), &inv, inv.Payload, "application/json", queueOf(cn)); err != nil {
			b.Fatal(err)
		}
	}
	if srv.accepts.Load() != 1 {
		b.Fatalf("%d connections", srv.accepts.Load())
	}
}

func benchNextRespondNetHTTP(b *testing.B) {
	srv := newTestServer(b, apiHandler(benchPayload))
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	base := "http://" + srv.addr() + pathInvocation
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"next", nil)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		id := resp.Header.Get(hdrRequestID)
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, base+id+"/response", bytes.NewReader(buf.Bytes()))
		req.Header.Set(hdrContentType, "application/json")
		resp, err = hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			b.Fatal(resp.Status)
		}
	}
	if srv.accepts.Load() != 1 {
		b.Fatalf("net/http opened %d connections", srv.accepts.Load())
	}
}

// BenchmarkParseNext: parsing one /next response from memory.
func BenchmarkParseNext(b *testing.B) {
	raw := nextResponse(testRequestID, benchPayload, "")
	rd := bytes.NewReader(raw)
	cn := &Conn{}
	br := newBenchReader(rd)
	var inv Invocation
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		rd.Reset(raw)
		br.Reset(rd)
		inv.reset()
		cn.hdrs.start(&inv, &cn.in)
		h, err := readHead(br, &cn.spill, &defaultLimits, &cn.hdrs)
		if err != nil {
			b.Fatal(err)
		}
		if err := cn.hdrs.finish(); err != nil {
			b.Fatal(err)
		}
		cn.body.init(br, &cn.spill, h, &defaultLimits)
		if inv.Payload, err = cn.body.readAll(inv.Payload, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
