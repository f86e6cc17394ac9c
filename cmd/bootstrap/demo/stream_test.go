package demo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// readChunks reads r to its end, one Read at a time into a buffer of size
// buf, and returns the data, the sizes read and the final error.
func readChunks(r io.Reader, buf int) ([]byte, []int, error) {
	var out []byte
	var sizes []int
	p := make([]byte, buf)
	for {
		n, err := r.Read(p)
		out = append(out, p[:n]...)
		if n > 0 {
			sizes = append(sizes, n)
		}
		if err != nil {
			return out, sizes, err
		}
	}
}

func TestStream(t *testing.T) {
	tests := []struct {
		ev       StreamEvent
		buf      int
		want     int // bytes read
		chunks   int
		wantFail bool
	}{
		{StreamEvent{Bytes: 100}, 1 << 20, 100, 1, false},
		{StreamEvent{Bytes: 100, Chunk: 30}, 1 << 20, 100, 4, false},
		{StreamEvent{Bytes: 100, Chunk: 30}, 7, 100, 15, false},
		{StreamEvent{Bytes: 0}, 10, 0, 0, false},
		{StreamEvent{Bytes: 100, Chunk: 30, Fail: "x", FailAt: 45}, 1 << 20, 45, 2, true},
		{StreamEvent{Bytes: 100, Fail: "x", FailAt: 0}, 1 << 20, 0, 0, true},
		{StreamEvent{Bytes: 10, Fail: "x", FailAt: 20}, 1 << 20, 10, 1, false},
	}
	for _, tt := range tests {
		r, err := Stream(context.Background(), tt.ev)
		if err != nil {
			t.Fatal(err)
		}
		got, sizes, err := readChunks(r, tt.buf)
		if de := (*Error)(nil); tt.wantFail != errors.As(err, &de) || !tt.wantFail && err != io.EOF {
			t.Fatalf("%+v: err %v", tt.ev, err)
		}
		if !bytes.Equal(got, StreamBody(tt.want)) || len(sizes) != tt.chunks {
			t.Fatalf("%+v: %d bytes in chunks %v, want %d in %d", tt.ev, len(got), sizes, tt.want, tt.chunks)
		}
	}
	if _, err := Stream(context.Background(), StreamEvent{Bytes: -1}); err == nil {
		t.Fatal("negative size accepted")
	}
}

// A body shifted by a chunk (dropped, doubled or swapped) differs.
func TestStreamBodyDoesNotRepeat(t *testing.T) {
	b := StreamBody(1 << 20)
	for _, shift := range []int{1, 26, 1 << 10, 16 << 10, 32 << 10, 64 << 10} {
		if bytes.Equal(b[:1<<19], b[shift:shift+1<<19]) {
			t.Fatalf("the body repeats every %d bytes", shift)
		}
	}
}

// With meet, K streams each produce their first chunk, then wait for one
// another before the rest.
func TestStreamMeet(t *testing.T) {
	const k = 3
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	firsts := make(chan struct{}, k)
	for range k {
		wg.Go(func() {
			r, _ := Stream(ctx, StreamEvent{Bytes: 20, Chunk: 10, Meet: k})
			p := make([]byte, 64)
			if n, err := r.Read(p); n != 10 || err != nil {
				t.Errorf("first read %d %v", n, err)
			}
			firsts <- struct{}{}
			if n, err := r.Read(p); n != 10 || err != nil || len(firsts) != k {
				t.Errorf("second read %d %v after %d first chunks", n, err, len(firsts))
			}
		})
	}
	wg.Wait()
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	r, _ := Stream(short, StreamEvent{Bytes: 20, Chunk: 10, Meet: 2})
	p := make([]byte, 64)
	_, _ = r.Read(p)
	if _, err := r.Read(p); !errors.Is(err, errGather) {
		t.Fatalf("alone at the meeting: %v", err)
	}
}
