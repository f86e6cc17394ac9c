package rapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"testing"
)

// writerTo writes w, one Write each, then returns err.
type writerTo struct {
	w   []string
	err error
}

func (r *writerTo) Read([]byte) (int, error) { panic("read") }

func (r *writerTo) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, s := range r.w {
		k, err := w.Write([]byte(s))
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, r.err
}

// TestStreamWriterToErrors: WriteTo's error after the first byte ends the
// body with the trailers, before it is an ordinary /error.
func TestStreamWriterToErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		body *writerTo
		line string
		raw  string
		sent int64
	}{
		{"mid-stream", &writerTo{w: []string{"part1"}, err: boom}, "/response",
			"5\r\npart1\r\n0\r\nLambda-Runtime-Function-Error-Type: E\r\nLambda-Runtime-Function-Error-Body: " + b64(`{}`) + "\r\n\r\n", 5},
		{"before the first byte", &writerTo{w: []string{""}, err: boom}, "/error", `{}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := streamServer(t)
			cn := srv.client(t).Conn()
			defer cn.Close()
			ed := errorDoc{typ: "E", doc: []byte(`{}`)}
			if err := cn.Stream(context.Background(), &Invocation{RequestID: "r-1"}, "", tt.body, ed.fn, queuePtr(cn)); err != nil {
				t.Fatal(err)
			}
			if ed.calls != 1 || ed.err != boom || ed.sent != tt.sent {
				t.Fatalf("onError: %d calls, err %v, sent %d", ed.calls, ed.err, ed.sent)
			}
			got := seen()
			if len(got) != 1 || got[0].line != "POST /2018-06-01/runtime/invocation/r-1"+tt.line+" HTTP/1.1" {
				t.Fatalf("seen %+v", got)
			}
			s := got[0]
			if tt.line == "/error" {
				if s.chunked || s.body != tt.raw {
					t.Fatalf("error post %q, body %q", s.header, s.body)
				}
				return
			}
			if s.raw != tt.raw {
				t.Fatalf("body\n%q\nwant\n%q", s.raw, tt.raw)
			}
			if _, err := base64.StdEncoding.DecodeString(string((&srvReq{trailer: []byte(s.trailer)}).trailerValue(hdrErrorBody))); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestStreamWriterToPanic: a panic in WriteTo after the first byte drops
// the connection and goes on up the stack; the next call reconnects.
func TestStreamWriterToPanic(t *testing.T) {
	srv, _ := streamServer(t)
	cn := srv.client(t).Conn()
	defer cn.Close()
	var ed errorDoc
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		_ = cn.Stream(context.Background(), &Invocation{RequestID: "r-1"}, "", &panicWriterTo{}, ed.fn, queuePtr(cn))
	}()
	if err := cn.Stream(context.Background(), &Invocation{RequestID: "r-2"}, "", bytes.NewReader([]byte("ok")), ed.fn, queuePtr(cn)); err != nil {
		t.Fatal(err)
	}
	if srv.accepts.Load() != 2 {
		t.Fatalf("%d connections, want 2 (the cut one dropped)", srv.accepts.Load())
	}
}

type panicWriterTo struct{}

func (panicWriterTo) Read([]byte) (int, error) { panic("read") }

func (panicWriterTo) WriteTo(w io.Writer) (int64, error) {
	_, _ = w.Write([]byte("x"))
	panic("midway")
}
