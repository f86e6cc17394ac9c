//go:build !race

package pool

import (
	"testing"
)

type slot struct{ n int }

// testInvokeAllocs measures one Invoke and the wait for its task, the way
// the runtime hands off: a slot reserved, freed by the done hook.
func testInvokeAllocs[T any](t *testing.T, size int, arg T) {
	t.Helper()
	free := make(chan struct{}, size)
	w, err := NewWorkers(size, func(T) {}, WithDone(func(T) { free <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Release(wait); err != nil {
			t.Error(err)
		}
	}()
	invoke := func() {
		if err := w.Invoke(arg); err != nil {
			t.Fatal(err)
		}
		<-free
	}
	// Warm up: let ants start its goroutines, which is where it allocates.
	for range 100 * size {
		invoke()
	}
	if n := testing.AllocsPerRun(1000, invoke); n != 0 {
		t.Fatalf("Invoke allocates %v per task, want 0", n)
	}
}

func TestAllocsInvoke(t *testing.T) {
	tests := []struct {
		name string
		run  func(*testing.T)
	}{
		{"pointer arg, size 1", func(t *testing.T) { testInvokeAllocs(t, 1, &slot{}) }},
		{"pointer arg, size 16", func(t *testing.T) { testInvokeAllocs(t, 16, &slot{}) }},
		{"int arg", func(t *testing.T) { testInvokeAllocs(t, 4, 42) }},
		{"struct arg", func(t *testing.T) { testInvokeAllocs(t, 4, slot{n: 7}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func TestAllocsBuffers(t *testing.T) {
	payload := make([]byte, 8<<10)
	b := NewBuffers(1 << 20)
	cycle := func() {
		req, resp := b.Get(), b.Get()
		req.Write(payload)
		resp.Write(payload[:100])
		b.Put(req)
		b.Put(resp)
		_ = b.Retained()
	}
	cycle() // first use grows the two buffers
	if n := testing.AllocsPerRun(1000, cycle); n != 0 {
		t.Fatalf("Get/Put allocates %v per cycle, want 0", n)
	}
}
