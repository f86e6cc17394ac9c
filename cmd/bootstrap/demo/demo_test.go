package demo

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/bytebufferpool"
)

func TestHandle(t *testing.T) {
	tests := []struct {
		name    string
		ev      Event
		want    string
		wantErr string
	}{
		{name: "default", ev: Event{ID: json.RawMessage(`7`)}, want: `{"ok":true,"id":7,"requestId":""}`},
		{name: "stack", ev: Event{StackKiB: 32}, want: `{"ok":true,"requestId":""}`},
		{name: "size 2", ev: Event{Size: 2}, want: `""`},
		{name: "size 5", ev: Event{Size: 5}, want: `"xxx"`},
		{name: "fail", ev: Event{Fail: "boom"}, wantErr: "boom"},
		{name: "size too large", ev: Event{Size: MaxSize + 1}, wantErr: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Handle(context.Background(), tt.ev)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestBodySizesAreExactAndValidJSON(t *testing.T) {
	for _, n := range []int{2, 3, 1024, 1 << 20, MaxSize} {
		b, err := Body(n)
		if err != nil || len(b) != n || !json.Valid(b) {
			t.Fatalf("Body(%d): len %d, valid %v, err %v", n, len(b), json.Valid(b), err)
		}
	}
}

func TestPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	_, _ = Handle(context.Background(), Event{Panic: true})
}

func TestGatherReleasesAGroup(t *testing.T) {
	const k = 5
	var wg sync.WaitGroup
	results := make(chan int, k)
	for range k {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, err := Handle(ctx, Event{Gather: k})
			if err != nil {
				t.Error(err)
				return
			}
			var r Reply
			_ = json.Unmarshal(out, &r)
			results <- r.Gathered
		})
	}
	wg.Wait()
	close(results)
	for g := range results {
		if g != k {
			t.Fatalf("gathered %d, want %d", g, k)
		}
	}
}

func TestGatherTimesOutAlone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Handle(ctx, Event{Gather: 3})
	if !errors.Is(err, errGather) {
		t.Fatalf("err = %v, want errGather", err)
	}
	// The barrier is left clean for the next group.
	if gather.waiting != 0 {
		t.Fatalf("waiting = %d after timeout", gather.waiting)
	}
}

// TestHandleRawMatchesHandle: the raw handler and the Invoker answer every
// event of the contract byte for byte as Handle does, and fail where it
// fails.
func TestHandleRawMatchesHandle(t *testing.T) {
	for _, payload := range []string{`{"id":7}`, `{"stack_kib":32}`, `{"size":5}`, `{"size":65536}`, `{"fail":"boom"}`, `{"size":-1,"fail":""}`, `[`} {
		var out bytebufferpool.ByteBuffer
		rawErr := HandleRaw(context.Background(), []byte(payload), &out)
		inv, invErr := Invoker{}.Invoke(context.Background(), []byte(payload))
		var ev Event
		want, err := json.RawMessage(nil), json.Unmarshal([]byte(payload), &ev)
		if err == nil {
			want, err = Handle(context.Background(), ev)
		}
		if (rawErr == nil) != (err == nil) || string(out.B) != string(want) {
			t.Fatalf("%s: raw %q, %v; Handle %q, %v", payload, abbrev(out.B), rawErr, abbrev(want), err)
		}
		if (invErr == nil) != (err == nil) || string(inv) != string(want) {
			t.Fatalf("%s: Invoker %q, %v; Handle %q, %v", payload, abbrev(inv), invErr, abbrev(want), err)
		}
	}
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// TestStackGrows: {"stack_kib":32} leaves the goroutine that served it a
// stack of 32 KiB (it starts at 8): 64 such goroutines, parked, hold about
// 64 x 32 KiB of stack more than before, and {"stack_kib":0} adds about
// nothing. No GC runs meanwhile, which would shrink the stacks.
func TestStackGrows(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const g = 64
	grown := func(kib int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		release := make(chan struct{})
		var served, done sync.WaitGroup
		for range g {
			served.Add(1)
			done.Go(func() {
				if _, err := Handle(context.Background(), Event{StackKiB: kib}); err != nil {
					t.Error(err)
				}
				served.Done()
				<-release
			})
		}
		served.Wait()
		runtime.ReadMemStats(&after)
		close(release)
		done.Wait()
		return (after.StackInuse - before.StackInuse) / g
	}
	if per := grown(32); per < 24<<10 || per > 48<<10 {
		t.Errorf("stack_kib 32: %d KiB of stack per goroutine, want about 32", per>>10)
	}
	if per := grown(0); per > 12<<10 {
		t.Errorf("stack_kib 0: %d KiB of stack per goroutine, want the starting 8", per>>10)
	}
}
