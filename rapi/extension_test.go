package rapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// extAPI is an Extensions API served by net/http, shaped like the
// emulator's: registration answers the identifier, event/next blocks.
type extAPI struct {
	srv     *httptest.Server
	bodies  chan string
	nextIDs chan string
}

func newExtAPI(t *testing.T, register http.HandlerFunc, next http.HandlerFunc) *extAPI {
	t.Helper()
	a := &extAPI{bodies: make(chan string, 4), nextIDs: make(chan string, 4)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+pathExtRegister, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.bodies <- r.Header.Get(hdrExtName) + " " + r.Header.Get(hdrContentType) + " " + string(b)
		register(w, r)
	})
	mux.HandleFunc("GET "+pathExtEventNext, func(w http.ResponseWriter, r *http.Request) {
		a.nextIDs <- r.Header.Get(hdrExtID)
		next(w, r)
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *extAPI) client(t *testing.T) *Client {
	t.Helper()
	c, err := New(strings.TrimPrefix(a.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func registerOK(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set(hdrExtID, "b2c3d4e5-0000-4000-8000-000000000001")
	w.Header().Set(hdrContentType, contentJSON)
	_, _ = io.WriteString(w, `{"functionName":"f","functionVersion":"$LATEST","handler":"h"}`)
}

// blockNext holds the event/next call open until the client goes away, as
// the platform does for an extension that subscribed to nothing.
func blockNext(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

func TestRegisterExtension(t *testing.T) {
	tests := []struct {
		name     string
		register http.HandlerFunc
		wantID   string
		wantErr  error
	}{
		{"registered", registerOK, "b2c3d4e5-0000-4000-8000-000000000001", nil},
		{"refused", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"errorType":"Extension.RegistrationClosed"}`, http.StatusForbidden)
		}, "", errForbidden},
		{"no identifier", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "{}") }, "", errMalformed},
		{"broken API", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, "", ErrRuntimeAPI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newExtAPI(t, tt.register, blockNext)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			id, err := a.client(t).RegisterExtension(ctx, "lmigo")
			if !errors.Is(err, tt.wantErr) || id != tt.wantID {
				t.Fatalf("RegisterExtension = %q, %v; want %q, %v", id, err, tt.wantID, tt.wantErr)
			}
			if got := <-a.bodies; got != `lmigo application/json {"events":[]}` {
				t.Errorf("registration sent %q", got)
			}
		})
	}
}

func TestRegisterExtensionInvalidName(t *testing.T) {
	c, err := New("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "a\r\nX-Injected: 1", strings.Repeat("n", maxExtName+1)} {
		if _, err := c.RegisterExtension(context.Background(), name); !errors.Is(err, ErrInvalid) {
			t.Errorf("name %q: err %v, want ErrInvalid", name, err)
		}
	}
	for _, id := range []string{"", "a\nb"} {
		if err := c.AwaitExtensionEvent(context.Background(), id); !errors.Is(err, ErrInvalid) {
			t.Errorf("id %q: err %v, want ErrInvalid", id, err)
		}
	}
}

// AwaitExtensionEvent sends the identifier and blocks until its context
// ends; an event, should one come, ends it with nil.
func TestAwaitExtensionEvent(t *testing.T) {
	t.Run("blocks until cancelled", func(t *testing.T) {
		a := newExtAPI(t, registerOK, blockNext)
		c := a.client(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.AwaitExtensionEvent(ctx, "ext-1") }()
		if got := <-a.nextIDs; got != "ext-1" {
			t.Fatalf("event/next sent identifier %q", got)
		}
		select {
		case err := <-done:
			t.Fatalf("returned before cancel: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
	t.Run("event", func(t *testing.T) {
		a := newExtAPI(t, registerOK, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `{"eventType":"SHUTDOWN","deadlineMs":1}`)
		})
		if err := a.client(t).AwaitExtensionEvent(context.Background(), "ext-1"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		a := newExtAPI(t, registerOK, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"errorType":"Extension.UnknownExtensionIdentifier"}`, http.StatusForbidden)
		})
		if err := a.client(t).AwaitExtensionEvent(context.Background(), "ext-1"); !errors.Is(err, errForbidden) {
			t.Fatalf("err %v, want ErrForbidden", err)
		}
	})
}

// FuzzExtensionIdentifier feeds arbitrary registration answers through the
// header parser with the extension's sink: never a panic, and an accepted
// identifier is one that can be sent back as a header value.
func FuzzExtensionIdentifier(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nLambda-Extension-Identifier: 0a1b\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nLambda-Extension-Identifier: a\r\nlambda-extension-identifier: b\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nLambda-Extension-Identifier:\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 403 Forbidden\r\nLambda-Extension-Identifier: x\r\nContent-Length: 0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var sink extSink
		var spill []byte
		br := newBenchReader(strings.NewReader(string(raw)))
		h, err := readHead(br, &spill, &defaultLimits, &sink)
		if err != nil {
			return
		}
		if h.code/100 != 2 && sink.seen {
			t.Fatalf("status %d handed headers to the sink", h.code)
		}
		if len(sink.id) > 0 && checkHeaderValue(hdrExtID, string(sink.id), maxExtID) != nil {
			t.Fatalf("accepted identifier %q cannot be sent back", sink.id)
		}
	})
}
