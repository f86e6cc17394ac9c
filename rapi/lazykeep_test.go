package rapi

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"weak"
)

// TestLazyAnswerKeepsNoLargeBody: a post left for Next to read its answer
// keeps its body until then, for a post on a fresh connection if this one
// ends. For a body over lazyMaxBody the answer is read at once instead, its
// poll still queued, so that an idle Conn never keeps a large answer alive
// (the retain cap bounds what a slot keeps, not what its Conn refers to).
func TestLazyAnswerKeepsNoLargeBody(t *testing.T) {
	srv, _ := logServer(t, nil)
	var inv Invocation
	cn := lazyConn(t, srv, &inv)
	ctx := context.Background()

	body := bytes.Repeat([]byte("x"), lazyMaxBody+1)
	kept := weak.Make(&body[0])
	if err := cn.Respond(ctx, &inv, body, "", queueOf(cn)); err != nil {
		t.Fatal(err)
	}
	body = nil // the test's own reference goes
	runtime.GC()
	runtime.GC()
	if kept.Value() != nil {
		t.Fatalf("the Conn keeps a %d-byte body after Respond returned", lazyMaxBody+1)
	}
	if cn.pipe.pending != "" || !cn.Queued() {
		t.Fatalf("pending %q, queued %v: want the answer read and the poll still queued", cn.pipe.pending, cn.Queued())
	}
	if id := readsQueued(t, cn, &inv); id == "" {
		t.Fatal("no invocation from the queued poll")
	}

	// A small body is left to Next, as before.
	respond(t, cn, &inv)
	if cn.pipe.pending == "" {
		t.Fatal("a small answer was read at once, want it left to Next")
	}
	readsQueued(t, cn, &inv)
}
