package rapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeNetHTTP is a Runtime API served by net/http, to prove that what rapi
// writes and reads is the HTTP/1.1 that a real server speaks.
type fakeNetHTTP struct {
	srv      *httptest.Server
	newConns atomic.Int64
	mu       sync.Mutex
	posts    map[string][]byte // path -> body
	errTypes map[string]string // path -> error type header
	n        atomic.Int64
	payload  []byte
	chunked  bool
}

func newFakeNetHTTP(t *testing.T, payload []byte, chunked bool) *fakeNetHTTP {
	f := &fakeNetHTTP{posts: map[string][]byte{}, errTypes: map[string]string{}, payload: payload, chunked: chunked}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		id := "req-" + strconv.FormatInt(f.n.Add(1), 10)
		h := w.Header()
		h.Set(hdrRequestID, id)
		h.Set(hdrDeadlineMs, "1700000000123")
		h.Set(hdrFunctionARN, testARN)
		h.Set(hdrTraceID, testTrace)
		h.Set(hdrInvocationID, "inv-"+id)
		h.Set(hdrContentType, "application/json")
		if !f.chunked {
			h.Set(hdrContentLength, strconv.Itoa(len(f.payload)))
			w.Write(f.payload)
			return
		}
		half := len(f.payload) / 2
		w.Write(f.payload[:half])
		w.(http.Flusher).Flush() // forces chunked encoding
		w.Write(f.payload[half:])
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "gone" {
			http.Error(w, `{"errorMessage":"Invoke timed out"}`, http.StatusGone)
			return
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts[r.URL.Path] = body
		f.errTypes[r.URL.Path] = r.Header.Get(hdrErrorType)
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"OK"}`)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts[r.URL.Path] = body
		f.errTypes[r.URL.Path] = r.Header.Get(hdrErrorType)
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	f.srv = httptest.NewUnstartedServer(mux)
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.newConns.Add(1)
		}
	}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeNetHTTP) addr() string { return f.srv.Listener.Addr().String() }

func (f *fakeNetHTTP) post(path string) ([]byte, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts[path], f.errTypes[path]
}

func TestInteropNetHTTP(t *testing.T) {
	for _, tt := range []struct {
		name    string
		payload []byte
		chunked bool
		rounds  int // a multiple of 10
	}{
		{"small", []byte(`{"hello":"world"}`), false, 100},
		{"chunked", bytes.Repeat([]byte("c"), 100<<10), true, 100},
		{"large", bytes.Repeat([]byte("L"), 3<<20), false, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeNetHTTP(t, tt.payload, tt.chunked)
			c, err := New(f.addr())
			if err != nil {
				t.Fatal(err)
			}
			cn := c.Conn()
			defer cn.Close()
			ctx := context.Background()
			var inv Invocation
			for i := 1; i <= tt.rounds; i++ {
				if err := cn.Next(ctx, &inv); err != nil {
					t.Fatalf("%d: %v", i, err)
				}
				if inv.RequestID != "req-"+strconv.Itoa(i) || inv.InvocationID != "inv-"+inv.RequestID ||
					inv.FunctionARN != testARN || inv.TraceID != testTrace || inv.DeadlineErr != nil ||
					!bytes.Equal(inv.Payload, tt.payload) {
					t.Fatalf("%d: %q %q %q len %d", i, inv.RequestID, inv.FunctionARN, inv.TraceID, len(inv.Payload))
				}
				if i%10 == 0 {
					if err := cn.Fail(ctx, &inv, "Handler.Err", []byte(`{"errorMessage":"m"}`), []byte(`{"x":1}`), queueOf(cn)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := cn.Respond(ctx, &inv, inv.Payload, "application/json", queueOf(cn)); err != nil {
					t.Fatalf("%d: %v", i, err)
				}
			}
			last := pathInvocation + "req-" + strconv.Itoa(tt.rounds)
			if got, _ := f.post(pathInvocation + "req-" + strconv.Itoa(tt.rounds-1) + "/response"); !bytes.Equal(got, tt.payload) {
				t.Fatalf("response body %d bytes", len(got))
			}
			if got, et := f.post(last + "/error"); string(got) != `{"errorMessage":"m"}` || et != "Handler.Err" {
				t.Fatalf("error %q %q", got, et)
			}
			err = cn.Respond(ctx, &Invocation{RequestID: "gone"}, nil, "", queueOf(cn))
			var se *StatusError
			if !errors.Is(err, errGone) || !errors.As(err, &se) || !bytes.Contains(se.Body, []byte("timed out")) {
				t.Fatalf("err = %v", err)
			}
			if err := cn.Next(ctx, &inv); err != nil {
				t.Fatal(err)
			}
			if n := f.newConns.Load(); n != 1 {
				t.Fatalf("server saw %d connections, want 1", n)
			}
			if err := c.InitError(ctx, "Runtime.Init", []byte(`{"errorMessage":"boom"}`)); err != nil {
				t.Fatal(err)
			}
			if got, et := f.post("/2018-06-01/runtime/init/error"); string(got) != `{"errorMessage":"boom"}` || et != "Runtime.Init" {
				t.Fatalf("init error %q %q", got, et)
			}
		})
	}
}
